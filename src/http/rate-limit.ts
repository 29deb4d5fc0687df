import type { Request, RequestHandler, Response } from "express";
import {
  ipKeyGenerator,
  MemoryStore,
  rateLimit,
  type AugmentedRequest,
  type ClientRateLimitInfo,
  type Logger as LimiterLogger,
  type Options,
  type RateLimitInfo,
  type Store,
} from "express-rate-limit";
import type { Config } from "../config.js";
import { errors, type ApiError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Redis } from "../redis.js";
import type { Admission, AuthenticationGuards, FailedAuthentications } from "../auth/authenticate.js";
import { CounterPlace } from "./rate-limit-store.js";

/** Which limit refused a request: the API user's budget, or the client address's failed keys. */
export type RateLimitKind = "user" | "address";

export interface RateLimitOptions {
  config: Config;
  logger: Logger;
  /** Counters in this Redis, shared by every instance using it; without it, in this process's memory. */
  redis?: Redis;
  /** Prefix of the Redis keys (`<prefix>user:<id>`, `<prefix>auth:<address>`, …); REDIS_KEY_PREFIX unless given. */
  prefix?: string | undefined;
  /** Called on every 429, whichever limit answered it (for metrics). */
  onLimited?: (kind: RateLimitKind) => void;
  /** Called when the counters leave Redis for this process's memory (true) and when they go back (false). */
  onCountingLocally?: (locally: boolean) => void;
}

export const WINDOW_MS = 60_000;
/** The name of the per-user policy in the RateLimit and RateLimit-Policy headers. */
export const USER_POLICY = "user";
/**
 * The two limits of the service, each left out entirely when set to 0:
 * - per API user (RATE_LIMIT_PER_MINUTE), after the key check, keyed by the
 *   user's id (not the key: a rotated key keeps its user's budget), with the
 *   standard RateLimit headers;
 * - per client address, failed key checks only (AUTH_FAILURES_PER_MINUTE),
 *   see failedAuthentications.
 * Both are fixed one-minute windows, counted in Redis when it is configured.
 * While Redis is unreachable each instance counts in its own memory (the
 * limits hold per instance), and the shared counters are used again as soon
 * as the client has reconnected.
 */
export function createRateLimits({
  config,
  logger,
  redis,
  prefix = config.redisKeyPrefix,
  onLimited,
  onCountingLocally,
}: RateLimitOptions): AuthenticationGuards {
  const counters = redis ? new CounterPlace(redis, logger, onCountingLocally) : undefined;
  const store = (name: string): Store => (counters ? counters.store(`${prefix}${name}:`) : new MemoryStore());
  const limited = onLimited ?? (() => undefined);
  if (config.trustProxy === true && config.authFailuresPerMinute > 0) {
    logger.warn(
      "TRUST_PROXY=true believes any X-Forwarded-For: a client can pick its own address and escape the limit on invalid keys. " +
        "Name the proxies instead (a number of hops, or their addresses).",
    );
  }
  return {
    failures: config.authFailuresPerMinute > 0 ? failedAuthentications(store("auth"), config.authFailuresPerMinute, limited) : undefined,
    after: config.rateLimitPerMinute > 0 ? [perUser(store("user"), config.rateLimitPerMinute, logger, limited)] : [],
  };
}

/**
 * express-rate-limit, keyed by the caller's id. Headers: RateLimit and
 * RateLimit-Policy of draft 8 of the IETF's RateLimit header fields (named
 * policies, so a second one can be added without changing clients), plus
 * Retry-After on a 429. Written here rather than by the library, which adds
 * a partition key (`pk`) made of a hash of the user's id: anyone counting
 * ids could read it back. The draft makes pk optional, and a client has one
 * key, so one partition: it is left out. No X-RateLimit-* headers.
 */
function perUser(store: Store, limit: number, logger: Logger, onLimited: (kind: RateLimitKind) => void): RequestHandler {
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit,
    store,
    keyGenerator: (req: Request) => String(req.caller!.id),
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    logger: limiterLogger(logger),
    handler: (req, res, next) => {
      const seconds = policyHeaders(res, (req as AugmentedRequest).rateLimit!);
      res.setHeader("Retry-After", String(seconds));
      onLimited("user");
      next(errors.rateLimited(`Too many requests: this API user may send ${limit} a minute; retry in ${seconds} s`));
    },
  });
  return (req, res, next) => {
    void limiter(req, res, (error?: unknown) => {
      if (error !== undefined) return next(error);
      const info = (req as Partial<AugmentedRequest>).rateLimit;
      if (info) policyHeaders(res, info);
      next();
    });
  };
}

/** Writes RateLimit and RateLimit-Policy; returns the seconds left in the window. */
function policyHeaders(res: Response, info: RateLimitInfo): number {
  const seconds = secondsUntil(info.resetTime);
  res.setHeader("RateLimit", `"${USER_POLICY}"; r=${info.remaining}; t=${seconds}`);
  res.setHeader("RateLimit-Policy", `"${USER_POLICY}"; q=${info.limit}; w=${Math.ceil(WINDOW_MS / 1000)}`);
  return seconds;
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
 * counted. Requests already under way when the budget runs out may still be
 * answered 401, so an address can overshoot by what it sends at once.
 */
function failedAuthentications(store: Store, limit: number, onLimited: (kind: RateLimitKind) => void): FailedAuthentications {
  void store.init?.({ windowMs: WINDOW_MS } as Options);
  const counted = new WeakSet<Request>();
  const failures = (address: string) => address;
  const failuresOfKey = (address: string, fingerprint: string) => `key:${address}:${fingerprint}`;
  const keysTried = (address: string) => `keys:${address}`;
  // A key Redis does not hold comes back as NaN hits (rate-limit-redis reads ioredis's null so): compared, never added.
  const reached = (info: ClientRateLimitInfo | undefined, hits: number) => (info?.totalHits ?? 0) >= hits;
  return {
    async admit(req, fingerprint) {
      const address = addressOf(req);
      const spent = await store.get!(failures(address));
      if (!reached(spent, limit)) return { over: false, check: "database" };
      const retryAfter = secondsUntil(spent!.resetTime);
      const [ofKey, tried] = await Promise.all([store.get!(failuresOfKey(address, fingerprint)), store.get!(keysTried(address))]);
      if (reached(ofKey, 1)) return { over: true, retryAfter, check: "none" };
      return { over: true, retryAfter, check: reached(tried, limit) ? "memory" : "database" };
    },
    count(req, fingerprint) {
      if (counted.has(req)) return;
      counted.add(req);
      const address = addressOf(req);
      void store.increment(failures(address));
      void Promise.resolve(store.increment(failuresOfKey(address, fingerprint))).then((ofKey) => {
        if (ofKey.totalHits === 1) void store.increment(keysTried(address));
      });
    },
    refuse(res: Response, admission: Admission): ApiError {
      const seconds = admission.over ? admission.retryAfter : Math.ceil(WINDOW_MS / 1000);
      res.setHeader("Retry-After", String(seconds));
      onLimited("address");
      return errors.rateLimited(`Too many requests with an invalid API key from this address; retry in ${seconds} s`);
    },
  };
}

/** IPv6 clients usually hold a whole /56: counted as one address, as express-rate-limit does. */
function addressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown");
}

/** express-rate-limit's own messages, into our log (its stores here do not fail: they fall back to memory). */
function limiterLogger(logger: Logger): LimiterLogger {
  return {
    error: (err, message) => logger.warn({ err }, message ?? "express-rate-limit"),
    warn: (err, message) => logger.warn({ err }, message ?? "express-rate-limit"),
  };
}

function secondsUntil(resetTime: Date | undefined): number {
  if (!resetTime) return Math.ceil(WINDOW_MS / 1000);
  return Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}
