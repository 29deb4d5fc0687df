import { type ClientRateLimitInfo, MemoryStore, type Options, type Store } from "express-rate-limit";
import { type RedisReply, RedisStore } from "rate-limit-redis";
import type { Logger } from "../core/logger.js";
import { throttledWarning } from "../core/throttled-warning.js";
import { LeasedCounter, type Place } from "./rate-limit-lease.js";
import type { Redis } from "./redis.js";

/**
 * After a Redis command failed while connected (it timed out: Redis accepts
 * but does not answer), how long the counters stay in memory before Redis is
 * tried again. A lost connection needs no such pause: the client refuses
 * commands at once until it has reconnected.
 */
export const REDIS_RETRY_MS = 2_000;

/**
 * Where the counters are kept: in Redis while it answers, else in this
 * process's memory. No request waits for Redis to come back: while the
 * client is not connected nothing is sent to it (the client reconnects on
 * its own, with backoff, and the next request after that uses Redis again);
 * after a command failed on a connection that looked fine (a timeout), Redis
 * is left alone for REDIS_RETRY_MS. The counts made in memory during an
 * outage are dropped when Redis is back: the shared counters take over.
 */
export class CounterPlace implements Place {
  private locally = false;
  private retryAt = 0;
  private readonly localStores: MemoryStore[] = [];
  private readonly leased: LeasedCounter[] = [];
  private readonly warn: (err: unknown) => void;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly onCountingLocally: (locally: boolean) => void = () => undefined,
  ) {
    this.warn = throttledWarning(logger, "Rate-limit counters unavailable in Redis: each instance counts in its own memory until it is back");
    // A new connection ends the pause after a failed command: the next request tries Redis at once, as the
    // "Redis reachable again" log line (limits/redis.ts) says (the pause kept counting in memory for up to 2 s).
    redis.on("ready", () => {
      this.retryAt = 0;
    });
  }

  store(prefix: string): Store {
    const local = new MemoryStore();
    this.localStores.push(local);
    const shared = new RecoveringRedisStore({ sendCommand: redisCommand(this.redis), prefix });
    return {
      localKeys: false,
      init(options: Options) {
        local.init(options);
        void shared.init(options);
      },
      get: (key) =>
        this.run(
          () => shared.get(key),
          () => local.get(key),
        ),
      increment: (key) =>
        this.run(
          () => shared.increment(key),
          () => local.increment(key),
        ),
      decrement: (key) =>
        this.run(
          () => shared.decrement(key),
          () => local.decrement(key),
        ),
      resetKey: (key) =>
        this.run(
          () => shared.resetKey(key),
          () => local.resetKey(key),
        ),
    };
  }

  /** A per-user counter: slices of each user's window taken from Redis, spent without a round trip (rate-limit-lease.ts). */
  leasedStore(prefix: string, limit: number, windowMs: number): LeasedCounter {
    const local = new MemoryStore();
    this.localStores.push(local);
    const counter = new LeasedCounter(this.redis, this, prefix, limit, windowMs, local);
    this.leased.push(counter);
    return counter;
  }

  sharedNow(): boolean {
    return !this.locally && this.redis.status === "ready" && Date.now() >= this.retryAt;
  }

  failed(error: unknown): void {
    this.retryAt = Date.now() + REDIS_RETRY_MS;
    this.toLocal(error);
  }

  async run<T>(shared: () => Promise<T>, local: () => Promise<T> | T): Promise<T> {
    if (this.redis.status === "ready" && Date.now() >= this.retryAt) {
      try {
        const result = await shared();
        if (this.locally) this.backToShared();
        return result;
      } catch (error) {
        this.failed(error);
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
    for (const counter of this.leased) counter.forget();
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

function redisCommand(redis: Redis): (...args: string[]) => Promise<RedisReply> {
  return (command, ...args) => redis.call(command, ...args) as Promise<RedisReply>;
}
