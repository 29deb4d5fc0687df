import type { Request, Response } from "express";
import { ipKeyGenerator, MemoryStore, type ClientRateLimitInfo, type Options, type RateLimitInfo, type Store } from "express-rate-limit";
import type { Config } from "../core/config.js";
import { errors, type ApiError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Redis } from "./redis.js";
import type { Admission, AuthenticationGuards, FailedAuthentications, Step } from "../auth/authenticate.js";
import type { LeasedCounter } from "./rate-limit-lease.js";
import { CounterPlace } from "./rate-limit-store.js";

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
 * The two limits of the service, each left out entirely when set to 0:
 * - per API user (RATE_LIMIT_PER_MINUTE), after the key check, keyed by the
 *   user's id (not the key: a rotated key keeps its user's budget), with the
 *   standard RateLimit headers;
 * - per client address, failed key checks only (AUTH_FAILURES_PER_MINUTE),
 *   see failedAuthentications.
 * Both are fixed windows of a minute (windowMs), counted in Redis when it is configured.
 * While Redis is unreachable each instance counts in its own memory (the
 * limits hold per instance), and the shared counters are used again as soon
 * as the client has reconnected.
 */
export function createRateLimits({
  config,
  logger,
  redis,
  onLimited,
  onCountingLocally,
  windowMs = WINDOW_MS,
}: RateLimitOptions): AuthenticationGuards {
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
 * A fixed window per API user, keyed by the caller's id (not the key: a
 * rotated key keeps its user's budget), counted in express-rate-limit's
 * memory store, or in Redis by a LeasedCounter.
 * Headers: RateLimit and RateLimit-Policy of draft 8 of the IETF's RateLimit
 * header fields (named policies, so a second one can be added without
 * changing clients), plus Retry-After on a 429. No partition key (`pk`,
 * which express-rate-limit would make of a hash of the user's id: anyone
 * counting ids could read it back; the draft makes it optional, and a client
 * has one key, so one partition). No X-RateLimit-* headers. Written here
 * rather than through express-rate-limit's middleware, whose per-request
 * machinery the benchmark measured. With Redis, counted in slices of the
 * user's window that this instance takes from Redis (LeasedCounter): no
 * round trip per request, and never more than the limit across instances.
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
 * The limit on failed authentication (a missing, unknown or revoked key:
 * 401; a valid key from an address its user may not use it from: 403), by
 * client address. It slows guessing without letting one misconfigured client
 * lock out the other servers of a network behind the same address. Three
 * counters per address and window: failures, failures per presented key
 * (by fingerprint, never the key), and how many different keys failed.
 * Under AUTH_FAILURES_PER_MINUTE failures, keys are checked as usual.
 * Beyond it, until the window ends:
 * - a key that already failed from this address gets 429 at once, without
 *   being checked (a looping revoked key costs one counter read);
 * - once the address has tried AUTH_FAILURES_PER_MINUTE different keys (it
 *   is guessing), only keys this instance has already authenticated, held
 *   in memory, pass; any other key gets 429 without a database lookup;
 * - otherwise the key is checked, passes if valid, and gets 429 if not.
 * Failures are counted when authentication decides them, not when the
 * answer is sent, so a client that hangs up still counts; a 429 is not
 * counted, except a key checked while the address is over (a new key, or a
 * request admitted as the window ends) that fails: it counts, in the window
 * in progress when it failed. Requests already under way when the budget
 * runs out may still be answered 401, so an address can overshoot by what it
 * sends at once.
 * With shared counters, a key this instance already knows (and may be used
 * from the address) does not read the address's failures from Redis on
 * every request: an address found under the limit is taken as such for
 * UNDER_LIMIT_FOR_MS, or until this instance counts a failure for it. Only
 * known keys from an allowed address skip the read, and such a key passes
 * whatever the address's failures (unless that very key failed from it), so
 * what the shortcut can let through is a known key whose own 403s, counted
 * by other instances in that second, reached the limit.
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
