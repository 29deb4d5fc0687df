import type { Logger } from "../core/logger.js";
import type { DbClient } from "../db/client.js";

const MINUTE_MS = 60_000;
/** How often the minutes noted are written: a crash loses at most this much of "last used". */
export const KEY_USAGE_FLUSH_MS = 30_000;

/**
 * When each key last authenticated, to the minute, without a write per
 * request: a request only notes its key's hash and minute in memory (once per
 * key per minute), and a timer writes what was noted in one UPDATE, off the
 * request's path. So each instance writes a key's last use at most once a
 * minute; instances write the same minute harmlessly (the latest wins).
 * Matched by hash against the current and the previous key, so a rotation
 * between the use and the write still credits the right key.
 */
export class KeyUsage {
  /** Noted, not yet written: key hash → minute (epoch ms). */
  private pending = new Map<string, number>();
  /** The last minute noted per key, so that a key is noted once a minute. */
  private readonly noted = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: DbClient,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Notes a key's use now: a map lookup, and nothing else unless the minute changed. */
  record(keyHash: string): void {
    const minute = Math.floor(this.clock() / MINUTE_MS) * MINUTE_MS;
    if (this.noted.get(keyHash) === minute) return;
    this.noted.set(keyHash, minute);
    this.pending.set(keyHash, minute);
  }

  /** Writes what was noted, in one statement; a failure puts it back for the next time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    const current = Math.floor(this.clock() / MINUTE_MS) * MINUTE_MS;
    for (const [hash, minute] of this.noted) if (minute < current) this.noted.delete(hash);
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const hashes = [...batch.keys()];
    const minutes = [...batch.values()].map((m) => new Date(m));
    try {
      // GREATEST ignores NULL, and never moves a time back (another instance may have written a later minute).
      await this.db.$executeRaw`
        WITH used AS (SELECT * FROM unnest(${hashes}::text[], ${minutes}::timestamptz[]) AS u(hash, at))
        UPDATE api_users SET
          "keyLastUsedAt" = GREATEST("keyLastUsedAt", (SELECT max(at) FROM used WHERE hash = "keyHash")),
          "previousKeyLastUsedAt" = GREATEST("previousKeyLastUsedAt", (SELECT max(at) FROM used WHERE hash = "previousKeyHash"))
        WHERE "keyHash" IN (SELECT hash FROM used) OR "previousKeyHash" IN (SELECT hash FROM used)`;
    } catch (error) {
      for (const [hash, minute] of batch) if (!this.pending.has(hash)) this.pending.set(hash, minute);
      throw error;
    }
  }

  /** Writes every KEY_USAGE_FLUSH_MS until stop(); failures are logged and retried at the next tick. */
  start(logger: Logger, everyMs = KEY_USAGE_FLUSH_MS): void {
    this.timer = setInterval(() => {
      this.flush().catch((error: unknown) => logger.warn({ err: error }, "could not record when keys were last used; retrying"));
    }, everyMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left (a graceful stop loses nothing). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
