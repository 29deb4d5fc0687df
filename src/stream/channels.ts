import type { Logger } from "../core/logger.js";
import { throttledWarning } from "../core/throttled-warning.js";
import { type Database, ListenUnavailableError, type Subscription } from "../db/database.js";
import { DELIVERIES_CHANNEL } from "../events/record.js";
import { USER_CHANGED_CHANNEL } from "../users/users.js";

/** The channel every instance's hub listens on for new events; the instance that committed them notifies it (HubChannels.announce). */
export const EVENTS_CHANNEL = "webhook_events";

/** One NOTIFY of new events at a time, and the next at least this long after: writes meanwhile share it. */
const ANNOUNCE_GAP_MS = 5;

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
  /** LISTEN is not delivered here at all (a transaction-mode pooler): no retries. */
  private unavailable = false;
  private announcing = false;
  private announceAgain = false;
  private readonly announceFailed: (err: unknown) => void;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly handlers: ChannelHandlers,
  ) {
    this.announceFailed = throttledWarning(logger, "event streams: announcing new events failed; instances read them at their next poll (a second)");
  }

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
        this.down++;
        // Said once at start (db.checkPooler): polling for good.
        if (error instanceof ListenUnavailableError) this.unavailable = true;
        else this.logger.warn({ err: error, channel }, "event streams: LISTEN failed; polling until it works");
      }
    };
    this.down = 0;
    await subscribe(EVENTS_CHANNEL, () => this.handlers.events());
    await subscribe(USER_CHANGED_CHANNEL, (username) => this.handlers.userChanged(username));
    if (this.down > 0 && !this.unavailable) this.reconnect();
  }

  /**
   * Tells every instance (LISTEN webhook_events, and webhook_deliveries for
   * their delivery workers) that events were committed through this one. Sent after the commit, not by a trigger at commit: a
   * NOTIFY in the writing transaction holds PostgreSQL's one notification
   * lock through the commit's flush, so that concurrent writes committed one
   * at a time (a reward log's write took twice as long: the history of bench/results.md).
   * What a failed or missed notification would have announced, the hubs'
   * one-second poll reads anyway.
   */
  announce(): void {
    if (this.closed) return;
    if (this.announcing) {
      this.announceAgain = true;
      return;
    }
    this.announcing = true;
    this.db.writeQueries.$queryRaw`SELECT 1 AS sent FROM pg_notify(${EVENTS_CHANNEL}, '') e, pg_notify(${DELIVERIES_CHANNEL}, '') d`
      .catch(this.announceFailed)
      .finally(() => {
        setTimeout(() => {
          this.announcing = false;
          if (!this.announceAgain) return;
          this.announceAgain = false;
          this.announce();
        }, ANNOUNCE_GAP_MS).unref();
      });
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
