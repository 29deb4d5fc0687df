import type { Request, Response } from "express";
import { type ClientRateLimitInfo, ipKeyGenerator, MemoryStore, type Options, type RateLimitInfo, type Store } from "express-rate-limit";
import type { Admission, AuthenticationGuards, FailedAuthentications, Step } from "../auth/authenticate.js";
import type { Config } from "../core/config.js";
import { type ApiError, errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { LeasedCounter } from "./rate-limit-lease.js";
import { CounterPlace } from "./rate-limit-store.js";
import type { Redis } from "./redis.js";

/** Which limit refused a request: the API user's budget, or the client address's failed keys. */
export type RateLimitKind = "user" | "address";

export interface RateLimitOptions {
  config: Config;
  logger: Logger;
  /** Counters in this Redis, shared by every instance using it; without it, in this process's memory. */
  redis?: Redis;
  /** Called on every 429, whichever limit answered it (for metrics). */
  onLimited?: (kind: RateLimitKind) => void;
  /** Called when the counters leave Redis for this process's memory (true) and when they go back (false). */
  onCountingLocally?: (locally: boolean) => void;
  /** The length of each fixed window; a minute (WINDOW_MS) unless given (tests shorten it). */
  windowMs?: number;
}

/** The window of both limits, as their settings (…_PER_MINUTE) say. */
export const WINDOW_MS = 60_000;
/** The name of the per-user policy in the RateLimit and RateLimit-Policy headers. */
const USER_POLICY = "user";
/**
 * The two limits (docs/CALLING.md, "Rate limits"), each off when set to 0: per API user
 * (RATE_LIMIT_PER_MINUTE, keyed by the user, so a rotated key keeps its budget) and per client address,
 * failed key checks only (AUTH_FAILURES_PER_MINUTE). Fixed windows of a minute, counted in Redis when
 * configured, in each instance's memory while Redis is unreachable.
 */
export function createRateLimits({ config, logger, redis, onLimited, onCountingLocally, windowMs = WINDOW_MS }: RateLimitOptions): AuthenticationGuards {
  const counters = redis ? new CounterPlace(redis, logger, onCountingLocally) : undefined;
  const store = (name: string): Store => (counters ? counters.store(`${config.redisKeyPrefix}${name}:`) : new MemoryStore());
  const limited = onLimited ?? (() => undefined);
  if (config.trustProxy === true && config.authFailuresPerMinute > 0) {
    logger.warn(
      "TRUST_PROXY=true believes any X-Forwarded-For: a client can pick its own address and escape the limit on invalid keys. " +
        "Name the proxies instead (a number of hops, or their addresses).",
    );
  }
  const limit = config.rateLimitPerMinute;
  const users = limit > 0 ? (counters ? counters.leasedStore(`${config.redisKeyPrefix}user:`, limit, windowMs) : new MemoryStore()) : undefined;
  const failures = config.authFailuresPerMinute > 0 ? store("auth") : undefined;
  return {
    failures: failures ? failedAuthentications(failures, config.authFailuresPerMinute, windowMs, limited, counters !== undefined) : undefined,
    after: users ? [perUser(users, limit, windowMs, logger, limited)] : [],
  };
}

/** The per-user counter: in memory, or slices of the user's window taken from Redis. */
type UserCounter = MemoryStore | LeasedCounter;

/**
 * A fixed window per API user, in express-rate-limit's memory store or in Redis by a LeasedCounter (slices
 * of the window taken by this instance: no round trip per request, never more than the limit across
 * instances). Headers: RateLimit and RateLimit-Policy of the IETF draft 8 (named policies; no partition
 * key, which would be a hash of the user's id), and Retry-After on a 429. Not express-rate-limit's
 * middleware, whose per-request cost the benchmark measured.
 */
function perUser(store: UserCounter, limit: number, windowMs: number, logger: Logger, onLimited: (kind: RateLimitKind) => void): Step {
  if (store instanceof MemoryStore) store.init({ windowMs } as Options);
  const judge = (res: Response, info: ClientRateLimitInfo) => {
    const seconds = policyHeaders(res, windowMs, { limit, remaining: Math.max(limit - info.totalHits, 0), resetTime: info.resetTime });
    if (info.totalHits > limit) {
      res.setHeader("Retry-After", String(seconds));
      onLimited("user");
      throw errors.rateLimited(`Too many requests: this API user may send ${limit} ${perWindow(windowMs)}; retry in ${seconds} s`);
    }
  };
  // The stores here fall back to memory rather than fail; should one fail, the request passes.
  const passWithoutLimit = (error: unknown) => logger.warn({ err: error }, "express-rate-limit: error from store, allowing request without rate-limiting.");
  return (req, res) => {
    let counted: ClientRateLimitInfo | Promise<ClientRateLimitInfo>;
    try {
      counted = store.increment(String(req.caller!.id));
    } catch (error) {
      passWithoutLimit(error);
      return;
    }
    // Most often known at once (a slice this instance holds): no round trip, and no promise to wait for.
    if (!(counted instanceof Promise)) return judge(res, counted);
    return counted.then((info) => judge(res, info), passWithoutLimit);
  };
}

/** Writes RateLimit and RateLimit-Policy; returns the seconds left in the window. */
function policyHeaders(res: Response, windowMs: number, info: Pick<RateLimitInfo, "limit" | "remaining" | "resetTime">): number {
  const seconds = secondsUntil(info.resetTime, windowMs);
  res.setHeader("RateLimit", `"${USER_POLICY}"; r=${info.remaining}; t=${seconds}`);
  res.setHeader("RateLimit-Policy", `"${USER_POLICY}"; q=${info.limit}; w=${Math.ceil(windowMs / 1000)}`);
  return seconds;
}

/** "a minute", as the settings name the window, or its length when shortened. */
function perWindow(windowMs: number): string {
  return windowMs === WINDOW_MS ? "a minute" : `every ${Math.ceil(windowMs / 1000)} s`;
}

/**
 * The limit on failed authentication (401, and a 403 for a key used from a refused address), by client
 * address: it slows guessing without letting one misconfigured client lock out its neighbours. Beyond
 * AUTH_FAILURES_PER_MINUTE failures in the window, a key that already failed from the address gets 429
 * unchecked; an address that tried as many different keys passes only keys this instance already knows;
 * any other key is checked as usual (docs/CALLING.md, "Rate limits"). A failure counts when authentication
 * decides it, even if the client hangs up. With Redis, a known key from an allowed address skips the read
 * of the address's count for UNDER_LIMIT_FOR_MS while the address was under the limit.
 */
function failedAuthentications(
  store: Store,
  limit: number,
  windowMs: number,
  onLimited: (kind: RateLimitKind) => void,
  shared: boolean,
): FailedAuthentications {
  void store.init?.({ windowMs } as Options);
  const counted = new WeakSet<Request>();
  // Address → when it was read under the limit; in the order read, so the oldest are dropped first.
  const underLimit = new Map<string, number>();
  const failures = (address: string) => address;
  const failuresOfKey = (address: string, fingerprint: string) => `key:${address}:${fingerprint}`;
  const keysTried = (address: string) => `keys:${address}`;
  // A key Redis does not hold comes back as NaN hits (rate-limit-redis reads ioredis's null so): compared, never added.
  const reached = (info: ClientRateLimitInfo | undefined, hits: number) => (info?.totalHits ?? 0) >= hits;
  return {
    async admit(req, fingerprint, known) {
      const address = addressOf(req);
      if (known && shared) {
        const now = Date.now();
        for (const [oldest, readAt] of underLimit) {
          if (now - readAt < UNDER_LIMIT_FOR_MS) break;
          underLimit.delete(oldest);
        }
        if (underLimit.has(address)) return UNDER;
      }
      const spent = await store.get!(failures(address));
      if (!reached(spent, limit)) {
        if (known && shared) {
          underLimit.delete(address);
          underLimit.set(address, Date.now());
        }
        return UNDER;
      }
      const retryAfter = secondsUntil(spent!.resetTime, windowMs);
      const [ofKey, tried] = await Promise.all([store.get!(failuresOfKey(address, fingerprint())), store.get!(keysTried(address))]);
      if (reached(ofKey, 1)) return { over: true, retryAfter, check: "none" };
      return { over: true, retryAfter, check: reached(tried, limit) ? "memory" : "database" };
    },
    count(req, fingerprint) {
      if (counted.has(req)) return;
      counted.add(req);
      const address = addressOf(req);
      underLimit.delete(address);
      void store.increment(failures(address));
      void Promise.resolve(store.increment(failuresOfKey(address, fingerprint()))).then((ofKey) => {
        if (ofKey.totalHits === 1) void store.increment(keysTried(address));
      });
    },
    refuse(res: Response, admission: Admission): ApiError {
      const seconds = admission.over ? admission.retryAfter : Math.ceil(windowMs / 1000);
      res.setHeader("Retry-After", String(seconds));
      onLimited("address");
      return errors.rateLimited(`Too many requests with an invalid API key from this address; retry in ${seconds} s`);
    },
  };
}

/** With shared counters, how long an address read under its failure limit is taken as such, for keys this instance knows. */
const UNDER_LIMIT_FOR_MS = 1_000;
const UNDER: Admission = { over: false, check: "database" };

/** IPv6 clients usually hold a whole /56: counted as one address, as express-rate-limit does. */
function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown");
}

function secondsUntil(resetTime: Date | undefined, windowMs: number): number {
  if (!resetTime) return Math.ceil(windowMs / 1000);
  return Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}
