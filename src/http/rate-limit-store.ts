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
 * `increment` on KEYS[2] unless KEYS[1] holds ARGV[1] or more hits): the
 * counters are the same keys with the same values and expiry; a request
 * costs one round trip to Redis instead of two.
 */
const GET_THEN_INCREMENT = `
local failures = redis.call("GET", KEYS[1])
local failuresExpire = redis.call("PTTL", KEYS[1])
if failures and tonumber(failures) >= tonumber(ARGV[1]) then
  return { failures, failuresExpire }
end
local windowMs = tonumber(ARGV[2])
local timeToExpire = redis.call("PTTL", KEYS[2])
if timeToExpire <= 0 then
  redis.call("SET", KEYS[2], 1, "PX", windowMs)
  return { failures, failuresExpire, 1, windowMs }
end
local totalHits = redis.call("INCR", KEYS[2])
return { failures, failuresExpire, totalHits, timeToExpire }`;

type GetThenIncrement = (failuresKey: string, userKey: string, limit: string, windowMs: string) => Promise<(string | number | null)[]>;

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
  private readonly warn: (err: unknown) => void;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly onCountingLocally: (locally: boolean) => void = () => undefined,
  ) {
    this.warn = throttledWarning(logger, "Rate-limit counters unavailable in Redis: each instance counts in its own memory until it is back");
    // A new connection ends the pause after a failed command: the next request tries Redis at once, as the
    // "Redis reachable again" log line (redis.ts) says (the pause kept counting in memory for up to 2 s).
    redis.on("ready", () => {
      this.retryAt = 0;
    });
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
      async () => {
        const script = this.script();
        const [hits, expire, userHits, userExpire] = await script(`${failures.prefix}${failuresKey}`, `${users.prefix}${userKey}`, String(limit), String(windowMs));
        return {
          failures: counterOf(hits, expire),
          counted: userHits === undefined ? undefined : counterOf(userHits, userExpire),
        };
      },
      async () => {
        const spent = await failures.local.get(failuresKey);
        if ((spent?.totalHits ?? 0) >= limit) return { failures: spent, counted: undefined };
        return { failures: spent, counted: await users.local.increment(userKey) };
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

