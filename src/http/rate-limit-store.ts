import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from "express-rate-limit";
import { RedisStore, type RedisReply } from "rate-limit-redis";
import type { Logger } from "../logger.js";
import type { Redis } from "../redis.js";
import { throttledWarning } from "../throttled-warning.js";

/**
 * After a Redis command failed while connected (it timed out: Redis accepts
 * but does not answer), how long the counters stay in memory before Redis is
 * tried again. A lost connection needs no such pause: the client refuses
 * commands at once until it has reconnected.
 */
const REDIS_RETRY_MS = 2_000;

/**
 * A store of CounterPlace: its key prefix and the memory it falls back to
 * are known, so that two of its stores can be consulted in one round trip.
 */
export interface PlacedStore extends Store {
  readonly prefix: string;
  readonly local: MemoryStore;
}

/** The address's failures so far and, when they are under the limit, the user's requests with this one counted. */
export interface AdmittedAndCounted {
  failures: ClientRateLimitInfo | undefined;
  counted: ClientRateLimitInfo | undefined;
}

/**
 * rate-limit-redis's two scripts in one (its `get` on KEYS[1], then its
 * `increment` on KEYS[2], by ARGV[3] requests, unless KEYS[1] holds ARGV[1]
 * or more hits): the counters are the same keys with the same values and
 * expiry; a request costs one round trip to Redis instead of two, and
 * requests of one user from one address that arrive together share one.
 */
const GET_THEN_INCREMENT = `
local failures = redis.call("GET", KEYS[1])
local failuresExpire = redis.call("PTTL", KEYS[1])
if failures and tonumber(failures) >= tonumber(ARGV[1]) then
  return { failures, failuresExpire }
end
local windowMs = tonumber(ARGV[2])
local requests = tonumber(ARGV[3])
local timeToExpire = redis.call("PTTL", KEYS[2])
if timeToExpire <= 0 then
  redis.call("SET", KEYS[2], requests, "PX", windowMs)
  return { failures, failuresExpire, requests, windowMs }
end
local totalHits = redis.call("INCRBY", KEYS[2], requests)
return { failures, failuresExpire, totalHits, timeToExpire }`;

type GetThenIncrement = (failuresKey: string, userKey: string, limit: string, windowMs: string, requests: string) => Promise<(string | number | null)[]>;

/** Requests waiting for one counter pair's round trip: each learns its own count. */
interface Lane {
  inFlight: boolean;
  waiting: { resolve: (counted: AdmittedAndCounted) => void; reject: (error: unknown) => void }[];
}

/**
 * Where the counters are kept: in Redis while it answers, else in this
 * process's memory. No request waits for Redis to come back: while the
 * client is not connected nothing is sent to it (the client reconnects on
 * its own, with backoff, and the next request after that uses Redis again);
 * after a command failed on a connection that looked fine (a timeout), Redis
 * is left alone for REDIS_RETRY_MS. The counts made in memory during an
 * outage are dropped when Redis is back: the shared counters take over.
 */
export class CounterPlace {
  private locally = false;
  private retryAt = 0;
  private readonly localStores: MemoryStore[] = [];
  private readonly lanes = new Map<string, Lane>();
  private readonly warn: (err: unknown) => void;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly onCountingLocally: (locally: boolean) => void = () => undefined,
  ) {
    this.warn = throttledWarning(logger, "Rate-limit counters unavailable in Redis: each instance counts in its own memory until it is back");
  }

  store(prefix: string): PlacedStore {
    const local = new MemoryStore();
    this.localStores.push(local);
    const shared = new RecoveringRedisStore({ sendCommand: redisCommand(this.redis), prefix });
    return {
      localKeys: false,
      prefix,
      local,
      init(options: Options) {
        local.init(options);
        void shared.init(options);
      },
      get: (key) => this.run(() => shared.get(key), () => local.get(key)),
      increment: (key) => this.run(() => shared.increment(key), () => local.increment(key)),
      decrement: (key) => this.run(() => shared.decrement(key), () => local.decrement(key)),
      resetKey: (key) => this.run(() => shared.resetKey(key), () => local.resetKey(key)),
    };
  }

  /**
   * `failures.get(failuresKey)`, then `users.increment(userKey)` unless the
   * failures reached `limit`: in Redis as one script (one round trip), in
   * memory while Redis is away.
   *
   * One round trip per counter pair at a time: the requests arriving while
   * it is in flight wait and go together in the next, counted by INCRBY, each
   * answered with its own place in the count (as many INCRs would have). A
   * user's budget stays exact; under load a busy key costs Redis a fraction
   * of a call per request. A failed call fails those waiting too, so that they
   * count in memory at once rather than try a Redis that did not answer.
   */
  getThenIncrement(
    failures: PlacedStore,
    failuresKey: string,
    users: PlacedStore,
    userKey: string,
    limit: number,
    windowMs: number,
  ): Promise<AdmittedAndCounted> {
    return this.run(
      () => {
        const pair = [`${failures.prefix}${failuresKey}`, `${users.prefix}${userKey}`] as const;
        const name = pair.join("\n");
        let lane = this.lanes.get(name);
        if (!lane) this.lanes.set(name, (lane = { inFlight: false, waiting: [] }));
        const counted = new Promise<AdmittedAndCounted>((resolve, reject) => lane.waiting.push({ resolve, reject }));
        if (!lane.inFlight) this.send(name, lane, pair, String(limit), String(windowMs));
        return counted;
      },
      async () => {
        const spent = await failures.local.get(failuresKey);
        if ((spent?.totalHits ?? 0) >= limit) return { failures: spent, counted: undefined };
        return { failures: spent, counted: await users.local.increment(userKey) };
      },
    );
  }

  /** Sends a lane's waiting requests as one script call, then the ones that arrived meanwhile. */
  private send(name: string, lane: Lane, [failuresKey, userKey]: readonly [string, string], limit: string, windowMs: string): void {
    const batch = lane.waiting.splice(0);
    lane.inFlight = true;
    this.script()(failuresKey, userKey, limit, windowMs, String(batch.length)).then(
      ([hits, expire, userHits, userExpire]) => {
        const failures = counterOf(hits, expire);
        const last = userHits === undefined ? undefined : counterOf(userHits, userExpire);
        batch.forEach(({ resolve }, i) => {
          resolve({ failures, counted: last && { ...last, totalHits: last.totalHits - batch.length + i + 1 } });
        });
        lane.inFlight = false;
        if (lane.waiting.length > 0) this.send(name, lane, [failuresKey, userKey], limit, windowMs);
        else this.lanes.delete(name);
      },
      (error: unknown) => {
        for (const { reject } of [...batch, ...lane.waiting.splice(0)]) reject(error);
        this.lanes.delete(name);
      },
    );
  }

  private script(): GetThenIncrement {
    const redis = this.redis as Redis & { rateLimitGetThenIncrement?: GetThenIncrement };
    // ioredis sends it by its SHA, and loads it again where Redis does not know it (a restart).
    if (!redis.rateLimitGetThenIncrement) redis.defineCommand("rateLimitGetThenIncrement", { numberOfKeys: 2, lua: GET_THEN_INCREMENT });
    return redis.rateLimitGetThenIncrement!.bind(redis);
  }

  private async run<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.redis.status === "ready" && Date.now() >= this.retryAt) {
      try {
        const result = await shared();
        if (this.locally) this.backToShared();
        return result;
      } catch (error) {
        this.retryAt = Date.now() + REDIS_RETRY_MS;
        this.toLocal(error);
      }
    } else if (!this.locally) {
      this.toLocal(new Error(`Redis connection ${this.redis.status}`));
    }
    return local();
  }

  private toLocal(error: unknown): void {
    this.warn(error);
    if (this.locally) return;
    this.locally = true;
    this.onCountingLocally(true);
  }

  private backToShared(): void {
    this.locally = false;
    for (const local of this.localStores) void local.resetAll();
    this.logger.info("Rate-limit counters back in Redis, shared by every instance");
    this.onCountingLocally(false);
  }
}

/**
 * rate-limit-redis loads its two Lua scripts once, in init: when Redis is
 * down at that moment, every later call fails on the same rejected promise,
 * for good. This store loads them again after any failure, so counting
 * resumes by itself once Redis is back.
 */
class RecoveringRedisStore extends RedisStore {
  private scriptsLost = false;

  override async init(options: Options): Promise<void> {
    try {
      await super.init(options);
    } catch {
      this.scriptsLost = true;
    }
  }

  override get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.recovering(() => super.get(key));
  }

  override increment(key: string): Promise<ClientRateLimitInfo> {
    return this.recovering(() => super.increment(key));
  }

  private async recovering<T>(call: () => Promise<T>): Promise<T> {
    if (this.scriptsLost) await this.reloadScripts();
    try {
      return await call();
    } catch (error) {
      this.scriptsLost = true;
      throw error;
    }
  }

  private async reloadScripts(): Promise<void> {
    this.scriptsLost = false;
    this.incrementScriptSha = this.loadIncrementScript();
    this.getScriptSha = this.loadGetScript();
    try {
      await Promise.all([this.incrementScriptSha, this.getScriptSha]);
    } catch (error) {
      this.scriptsLost = true;
      throw error;
    }
  }
}

/** As rate-limit-redis reads its scripts' replies (a key Redis does not hold: NaN hits). */
function counterOf(hits: string | number | null | undefined, expire: string | number | null | undefined): ClientRateLimitInfo {
  const totalHits = typeof hits === "number" ? hits : Number.parseInt(String(hits ?? ""), 10);
  return { totalHits, resetTime: new Date(Date.now() + Number(expire)) };
}

function redisCommand(redis: Redis): (...args: string[]) => Promise<RedisReply> {
  return (command, ...args) => redis.call(command, ...args) as Promise<RedisReply>;
}

