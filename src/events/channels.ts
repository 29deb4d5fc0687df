import type { Database, Subscription } from "../db/database.js";
import type { Logger } from "../logger.js";
import { USER_CHANGED_CHANNEL } from "../users/users.js";

/** The channel a trigger of webhook_events notifies when a transaction that wrote events commits (migration 20261125100000). */
export const EVENTS_CHANNEL = "webhook_events";

/** What the event hub is told through LISTEN: new events, and a user's keys changed (undefined: any user's may have). */
export interface ChannelHandlers {
  events(): void;
  userChanged(username: string | undefined): void;
}

/**
 * The event hub's LISTEN channels (new events, key revocations). A channel
 * that drops or fails is opened again a second later, the hub polling more
 * often meanwhile (`down`); once back, both handlers are called for what was
 * announced while it was down.
 */
export class HubChannels {
  private subscriptions: Subscription[] = [];
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  /** Channels not listening now. */
  down = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly handlers: ChannelHandlers,
  ) {}

  async listen(): Promise<void> {
    const subscribe = async (channel: string, message: (payload: string) => void) => {
      try {
        this.subscriptions.push(
          await this.db.subscribe(channel, {
            message,
            lost: (error) => {
              this.logger.warn({ err: error, channel }, "event streams: LISTEN connection lost; polling until it is back");
              this.reconnect();
            },
          }),
        );
      } catch (error) {
        this.logger.warn({ err: error, channel }, "event streams: LISTEN failed; polling until it works");
        this.down++;
      }
    };
    this.down = 0;
    await subscribe(EVENTS_CHANNEL, () => this.handlers.events());
    await subscribe(USER_CHANGED_CHANNEL, (username) => this.handlers.userChanged(username));
    if (this.down > 0) this.reconnect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const old = this.subscriptions;
    this.subscriptions = [];
    await Promise.all(old.map((c) => c.close().catch(() => undefined)));
  }

  private reconnect(): void {
    if (this.closed || this.retry) return;
    this.down = Math.max(1, this.down);
    this.retry = setTimeout(() => {
      void (async () => {
        const old = this.subscriptions;
        this.subscriptions = [];
        await Promise.all(old.map((c) => c.close().catch(() => undefined)));
        this.retry = undefined;
        if (this.closed) return;
        await this.listen();
        // Whatever was announced meanwhile.
        this.handlers.events();
        this.handlers.userChanged(undefined);
      })();
    }, 1_000);
    this.retry.unref();
  }
}
