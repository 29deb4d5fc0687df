import type { KeyCache } from "../auth/key-cache.js";
import type { Logger } from "../core/logger.js";
import { type Database, ListenUnavailableError, type Subscription } from "../db/database.js";
import { USER_CHANGED_CHANNEL } from "./users.js";

/**
 * Keeps this instance's key cache honest: LISTENs for revocations and
 * rotations announced by any instance or by the operator CLI, and drops the
 * user's keys when one arrives. While the channel is down the cache is off
 * (every request checks its key in the database), and it is retried; where
 * LISTEN is not delivered at all (a transaction-mode pooler), it stays off.
 */
export async function keepKeyCacheInSync(db: Database, cache: KeyCache, logger: Logger): Promise<{ stop(): Promise<void> }> {
  let subscription: Subscription | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 500;

  const connect = async (): Promise<void> => {
    try {
      subscription = await db.subscribe(USER_CHANGED_CHANNEL, {
        message: (username) => cache.forgetUser(username),
        lost: (error) => {
          cache.setEnabled(false);
          logger.warn({ err: error }, "key revocation channel lost: key cache off until it is back");
          schedule();
        },
      });
      delay = 500;
      cache.setEnabled(true);
    } catch (error) {
      cache.setEnabled(false);
      // Said once at start (db.checkPooler): every request checks its key in the database, for good.
      if (error instanceof ListenUnavailableError) return;
      logger.warn({ err: error }, "cannot listen for key revocations: key cache off, retrying");
      schedule();
    }
  };
  const schedule = () => {
    if (stopped) return;
    retry = setTimeout(() => void connect(), delay);
    retry.unref();
    delay = Math.min(delay * 2, 30_000);
  };

  cache.setEnabled(false);
  await connect();
  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await subscription?.close();
    },
  };
}
