import pg from "pg";

/** A query sent and not yet answered: when, and how to fail it. */
interface Pending {
  since: number;
  fail: (error: Error) => void;
}

type Callback = (error: Error | null, result?: unknown) => void;

// eslint-disable-next-line @typescript-eslint/unbound-method -- called on a client, with Reflect.apply
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;

/**
 * pg's `query_timeout` (a query the server never answers fails, and its connection is discarded) without
 * its cost: pg's wrapping closure kept every query's result past the young generation (about 4 KB a
 * query; bench/results.md). Here a query records when it was sent, and one timer per pool fails those
 * older than `timeoutMs`. Submittables (pg-cursor) go to pg as they are, with their own timeout.
 */
export function timedClient(timeoutMs: number): typeof pg.Client {
  const busy = new Set<TimedClient>();
  const sweepMs = Math.min(1_000, Math.max(25, Math.floor(timeoutMs / 4)));
  let sweeper: NodeJS.Timeout | undefined;

  const sweep = () => {
    const limit = performance.now() - timeoutMs;
    for (const client of busy) client.expire(limit);
    if (busy.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  class TimedClient extends pg.Client {
    /** In the order they were sent, which is the order pg runs them on a connection. */
    private readonly pending: Pending[] = [];

    // pg's overloads (text or config, values, callback) are passed through as they came.
    override query(config: unknown, values?: unknown, callback?: unknown): never {
      if (typeof (config as { submit?: unknown } | null)?.submit === "function") return Reflect.apply(pgQuery, this, [config, values, callback]) as never;
      const cb = (typeof values === "function" ? values : callback) as Callback | undefined;
      if (cb) {
        const done = this.track(cb);
        return Reflect.apply(pgQuery, this, typeof values === "function" ? [config, done] : [config, values, done]) as never;
      }
      return new Promise((resolve, reject) => {
        const done = this.track((error, result) => (error ? reject(error) : resolve(result)));
        (Reflect.apply(pgQuery, this, [config, values]) as Promise<unknown>).then((result) => done(null, result), done);
      }) as never;
    }

    /** Fails the queries sent before `limit` (performance.now() time). */
    expire(limit: number): void {
      while (this.pending.length > 0 && this.pending[0]!.since <= limit) {
        this.pending.shift()!.fail(new Error("Query read timeout"));
      }
      if (this.pending.length === 0) busy.delete(this);
    }

    /** Records a query sent now; what it returns settles it once, by its answer or by the sweep. */
    private track(callback: Callback): Callback {
      let settled = false;
      const entry: Pending = {
        since: performance.now(),
        fail: (error) => {
          settled = true;
          callback(error);
        },
      };
      this.pending.push(entry);
      busy.add(this);
      sweeper ??= setInterval(sweep, sweepMs).unref();
      return (error, result) => {
        if (settled) return;
        settled = true;
        const at = this.pending.indexOf(entry);
        if (at >= 0) this.pending.splice(at, 1);
        if (this.pending.length === 0) busy.delete(this);
        callback(error, result);
      };
    }
  }
  return TimedClient;
}
