import { type ClientRateLimitInfo, MemoryStore, type Options } from "express-rate-limit";
import type { Redis } from "./redis.js";

/**
 * The share of a user's budget an instance takes from Redis at a time: 1 % of the limit, at least one
 * request. Below 200 a minute a slice is one request, and every request asks Redis, exactly as a
 * shared counter would; the round trip only matters at rates that need limits in the thousands.
 */
const SLICE_OF_LIMIT = 0.01;
/** A slice this instance has held unused for this long goes back to Redis, for the other instances. */
export const IDLE_RETURN_MS = 1_000;
/** Once Redis said the budget is spent, how long this instance refuses on its own before asking again (slices may have come back). */
const SPENT_RECHECK_MS = 1_000;
/** Redis answered a window ending later than the one held by more than this: the held one ended (or its key was deleted). */
const NEW_WINDOW_MS = 1_000;

/**
 * Takes up to ARGV[3] requests of the budget ARGV[1] from the user's counter KEYS[1] (a string
 * holding the requests taken so far in the window, expiring with it: the same key and value as a
 * counter of one request at a time), never past the budget. Answers the requests taken, the counter
 * after them, and the milliseconds left in the window.
 */
const TAKE = `
local limit = tonumber(ARGV[1])
local ttl = redis.call("PTTL", KEYS[1])
local taken = 0
if ttl > 0 then
  taken = tonumber(redis.call("GET", KEYS[1])) or 0
else
  ttl = tonumber(ARGV[2])
end
local granted = math.max(0, math.min(tonumber(ARGV[3]), limit - taken))
if taken == 0 and granted > 0 then
  redis.call("SET", KEYS[1], granted, "PX", ttl)
elseif granted > 0 then
  redis.call("INCRBY", KEYS[1], granted)
end
return { granted, taken + granted, ttl }`;

/** Gives ARGV[1] requests back to KEYS[1], if its window is still the one they were taken from (it ends within ARGV[2] ms). */
const GIVE_BACK = `
local ttl = redis.call("PTTL", KEYS[1])
if ttl > 0 and ttl <= tonumber(ARGV[2]) then
  redis.call("DECRBY", KEYS[1], ARGV[1])
end
return ttl`;

type Take = (key: string, limit: string, windowMs: string, wanted: string) => Promise<[number, number, number]>;
type GiveBack = (key: string, count: string, endsWithinMs: string) => Promise<number>;

/** Where the counting happens: the shared counters (while usable) or this process's memory; see CounterPlace. */
export interface Place {
  /** True while Redis is usable and counting is shared: a held slice may be spent without asking anything. */
  sharedNow(): boolean;
  run<T>(shared: () => Promise<T>, local: () => Promise<T> | T): Promise<T>;
  /** A background command failed: count in memory for a while, as run() does after a failed command. */
  failed(error: unknown): void;
}

/** What this instance holds of one user's window. */
interface Held {
  readonly key: string;
  /** When the window ends, by this clock: the time the slice was asked for plus the window's time left, never after Redis's. */
  endsAt: number;
  /** Requests taken from Redis in this window and not given back. */
  taken: number;
  /** Of those, requests already let through. */
  used: number;
  /** Requests the other instances had taken when Redis last answered. */
  others: number;
  /** Requests waiting for the next slice. */
  waiting: number;
  asking: Promise<void> | undefined;
  /** When Redis last said the budget is spent (0: it has not). */
  spentAt: number;
  lastUsedAt: number;
}

/**
 * A per-user counter shared through Redis without a round trip per request: each instance takes a
 * slice of the user's window (1 % of the limit) in one atomic step, lets requests through from it,
 * takes the next slice in the background when half of it is used, and gives back what it held unused
 * for IDLE_RETURN_MS. Redis never hands out more than the limit in a window, so all instances together
 * let through at most the limit: no overshoot while Redis answers. The cost is the other way: a slice
 * held by one instance is not available to the others until used or given back, so a user whose
 * requests are spread over n instances may be refused up to (n − 1) × 1.5 % of the limit early, for at
 * most IDLE_RETURN_MS + SPENT_RECHECK_MS. While Redis is away, this process's memory counts alone (as
 * every counter of CounterPlace does); the slices held are then forgotten.
 */
export class LeasedCounter {
  private readonly held = new Map<string, Held>();
  private readonly slice: number;
  private sweeper: NodeJS.Timeout | undefined;
  private scripts: { take: Take; giveBack: GiveBack } | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly place: Place,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly windowMs: number,
    readonly local: MemoryStore,
  ) {
    this.slice = Math.max(1, Math.floor(limit * SLICE_OF_LIMIT));
    local.init({ windowMs } as Options);
  }

  /** Counts a request of `key`; more than the limit in its total hits means refused. */
  increment(key: string): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
    if (this.place.sharedNow()) {
      const held = this.held.get(key);
      const now = Date.now();
      if (held && now < held.endsAt) {
        if (held.used < held.taken) return this.use(held, now);
        if (held.spentAt > 0 && now - held.spentAt < SPENT_RECHECK_MS) return this.refused(held);
      }
    }
    return this.place.run(
      () => this.take(key),
      () => this.local.increment(key),
    );
  }

  /** Forgets the slices held: counting went to memory (they lapse with their window in Redis). */
  forget(): void {
    this.held.clear();
  }

  private use(held: Held, now: number): ClientRateLimitInfo {
    held.used += 1;
    held.lastUsedAt = now;
    // The next slice is asked for before this one runs out, so that no request waits for it.
    if (this.slice > 1 && !held.asking && held.spentAt === 0 && held.taken - held.used <= this.slice / 2) {
      this.ask(held.key, held, this.slice).catch((error: unknown) => this.place.failed(error));
    }
    return { totalHits: held.others + held.used, resetTime: new Date(held.endsAt) };
  }

  private refused(held: Held): ClientRateLimitInfo {
    return { totalHits: this.limit + 1, resetTime: new Date(held.endsAt) };
  }

  private async take(key: string): Promise<ClientRateLimitInfo> {
    let held = this.held.get(key);
    if (!held || Date.now() >= held.endsAt) {
      held = { key, endsAt: Number.POSITIVE_INFINITY, taken: 0, used: 0, others: 0, waiting: 0, asking: undefined, spentAt: 0, lastUsedAt: 0 };
      this.held.set(key, held);
      this.sweep();
    }
    held.waiting += 1;
    try {
      while (held.used >= held.taken) {
        if (held.spentAt > 0 && Date.now() - held.spentAt < SPENT_RECHECK_MS && !held.asking) return this.refused(held);
        // Requests arriving together share one round trip: it asks for all of them.
        await this.ask(key, held, Math.max(this.slice, held.waiting));
      }
      return this.use(held, Date.now());
    } finally {
      held.waiting -= 1;
    }
  }

  private ask(key: string, held: Held, wanted: number): Promise<void> {
    held.asking ??= (async () => {
      const askedAt = Date.now();
      try {
        const [granted, taken, ttl] = await this.commands().take(`${this.prefix}${key}`, String(this.limit), String(this.windowMs), String(wanted));
        const endsAt = askedAt + ttl;
        if (held.endsAt === Number.POSITIVE_INFINITY || endsAt > held.endsAt + NEW_WINDOW_MS) {
          // The first slice of a window (what was held of the one before lapsed with it).
          held.endsAt = endsAt;
          held.taken = 0;
          held.used = 0;
        }
        held.taken += granted;
        held.others = taken - held.taken;
        held.spentAt = granted < wanted ? Date.now() : 0;
      } finally {
        held.asking = undefined;
      }
    })();
    return held.asking;
  }

  /** While slices are held: forgets ended windows, gives back what was held unused for IDLE_RETURN_MS. */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, held] of this.held) {
        if (now >= held.endsAt) {
          if (held.waiting === 0) this.held.delete(key);
          continue;
        }
        const unused = held.taken - held.used;
        if (unused > 0 && !held.asking && now - held.lastUsedAt >= IDLE_RETURN_MS && this.place.sharedNow()) {
          held.taken = held.used;
          // Not when Redis fails: the slice then lapses with its window.
          this.commands()
            .giveBack(`${this.prefix}${key}`, String(unused), String(held.endsAt - now + NEW_WINDOW_MS))
            .catch(() => undefined);
        }
      }
      if (this.held.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, IDLE_RETURN_MS / 2);
    this.sweeper.unref();
  }

  private commands(): { take: Take; giveBack: GiveBack } {
    if (this.scripts) return this.scripts;
    const redis = this.redis as Redis & { rateLimitTake?: Take; rateLimitGiveBack?: GiveBack };
    // ioredis sends them by their SHA, and loads them again where Redis does not know them (a restart).
    if (!redis.rateLimitTake) {
      redis.defineCommand("rateLimitTake", { numberOfKeys: 1, lua: TAKE });
      redis.defineCommand("rateLimitGiveBack", { numberOfKeys: 1, lua: GIVE_BACK });
    }
    this.scripts = { take: redis.rateLimitTake!.bind(redis), giveBack: redis.rateLimitGiveBack!.bind(redis) };
    return this.scripts;
  }
}
