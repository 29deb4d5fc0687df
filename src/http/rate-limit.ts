import type { Request, RequestHandler, Response } from "express";
import {
  ipKeyGenerator,
  MemoryStore,
  rateLimit,
  type ClientRateLimitInfo,
  type Logger as LimiterLogger,
  type Options,
} from "express-rate-limit";
import { RedisStore, type RedisReply } from "rate-limit-redis";
import type { Config } from "../config.js";
import { errors } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Redis } from "../redis.js";
import { throttledWarning } from "../throttled-warning.js";
import type { AuthenticationGuards } from "./route.js";

/** Which limit refused a request: the API user's budget, or the client address's failed keys. */
export type RateLimitKind = "user" | "address";

export interface RateLimitOptions {
  config: Config;
  logger: Logger;
  /** Counters in this Redis, shared by every instance using it; without it, in this process's memory. */
  redis?: Redis;
  /** Prefix of the Redis keys (`<prefix>user:<id>`, `<prefix>auth:<address>`). */
  prefix?: string;
  /** Called on every 429, whichever limit answered it (for metrics). */
  onLimited?: (kind: RateLimitKind) => void;
}

export const DEFAULT_PREFIX = "rl:";
export const WINDOW_MS = 60_000;
/** The name of the per-user policy in the RateLimit and RateLimit-Policy headers. */
export const USER_POLICY = "user";

/**
 * The two limits of the service, each left out entirely when set to 0:
 * - per API user (RATE_LIMIT_PER_MINUTE), after the key check, keyed by the
 *   user's id (not the key: a rotated key keeps its user's budget), with the
 *   standard RateLimit headers;
 * - per client address, failed key checks only (AUTH_FAILURES_PER_MINUTE):
 *   an address over its budget is refused before its key is even checked,
 *   so guessing cannot go on; other addresses are not affected.
 * Both are fixed one-minute windows. When the store fails (Redis down),
 * requests pass unlimited and a warning is logged, at most every 30 s.
 */
export function createRateLimits({ config, logger, redis, prefix = DEFAULT_PREFIX, onLimited }: RateLimitOptions): AuthenticationGuards {
  const storeDown = throttledWarning(logger, "Rate-limit store unavailable: requests pass without rate limits (fail open)");
  const store = (name: string) =>
    redis
      ? new RecoveringRedisStore({ sendCommand: redisCommand(redis), prefix: `${prefix}${name}:` })
      : new MemoryStore();
  const noted = onLimited ?? (() => undefined);
  if (config.trustProxy === true && config.authFailuresPerMinute > 0) {
    logger.warn(
      "TRUST_PROXY=true believes any X-Forwarded-For: a client can pick its own address and escape the limit on invalid keys. " +
        "Name the proxies instead (a number of hops, or their addresses).",
    );
  }
  return {
    before: config.authFailuresPerMinute > 0 ? [perAddressFailures(store("auth"), config.authFailuresPerMinute, storeDown, noted)] : [],
    after: config.rateLimitPerMinute > 0 ? [perUser(store("user"), config.rateLimitPerMinute, logger, storeDown, noted)] : [],
  };
}

/**
 * express-rate-limit, keyed by the caller's id. Headers: RateLimit and
 * RateLimit-Policy of draft 8 of the IETF's RateLimit header fields (the
 * newest the library writes, and the shape the standard keeps: named
 * policies, so a second one can be added without changing clients), plus
 * Retry-After on a 429. The X-RateLimit-* headers are not sent.
 */
function perUser(store: MemoryStore | RedisStore, limit: number, logger: Logger, storeDown: (err: unknown) => void, onLimited: (kind: RateLimitKind) => void): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit,
    store,
    keyGenerator: (req: Request) => String(req.caller!.id),
    standardHeaders: "draft-8",
    identifier: USER_POLICY,
    legacyHeaders: false,
    passOnStoreError: true,
    logger: limiterLogger(logger, storeDown),
    handler: (_req, res, next) => {
      onLimited("user");
      next(errors.rateLimited(`Too many requests: this API user may send ${limit} a minute; retry in ${retryAfterOf(res)} s`));
    },
  });
}

/**
 * Counts an address's 401s, and refuses it with 429 once it has had its
 * budget, before its key is checked. Only failures are counted, when they
 * happen: a client sending many good requests at once is never mistaken for
 * a guesser (counting every request and taking successes back afterwards, as
 * express-rate-limit's skipSuccessfulRequests does, would). A 429 is not
 * counted: no key was checked, and in a fixed window it could not lengthen
 * the wait anyway. Requests already under way when the budget runs out may
 * still fail and be counted, so an address can overshoot by the number it
 * sends at once.
 */
function perAddressFailures(
  store: MemoryStore | RedisStore,
  limit: number,
  storeDown: (err: unknown) => void,
  onLimited: (kind: RateLimitKind) => void,
): RequestHandler {
  void store.init({ windowMs: WINDOW_MS } as Options);
  return async (req, res, next) => {
    // IPv6 clients usually hold a whole /56: counted as one address, as express-rate-limit does.
    const address = ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown");
    let spent: ClientRateLimitInfo | undefined;
    try {
      spent = await store.get(address);
    } catch (error) {
      storeDown(error);
    }
    if (spent && spent.totalHits >= limit) {
      const seconds = secondsUntil(spent.resetTime);
      res.setHeader("Retry-After", String(seconds));
      onLimited("address");
      throw errors.rateLimited(`Too many requests with an invalid API key from this address; retry in ${seconds} s`);
    }
    // Counted when authentication decides it failed (http/route.ts), not when the answer is sent: a
    // client that hangs up first, even before the decision, still counts.
    let counted = false;
    (res.locals as AuthFailureCounter).countAuthenticationFailure = () => {
      if (counted) return;
      counted = true;
      store.increment(address).catch(storeDown);
    };
    next();
  };
}

interface AuthFailureCounter {
  countAuthenticationFailure?: () => void;
}

/**
 * Authentication failed for this request: a missing or bad key (401), or a
 * valid key used from an address its user may not use it from (403). The
 * per-address limit, when on, counts it (once per request).
 */
export function countAuthenticationFailure(res: Response): void {
  (res.locals as AuthFailureCounter).countAuthenticationFailure?.();
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

/**
 * express-rate-limit's own messages, into our log. Its store errors (one
 * per request while Redis is down) go through the throttled warning.
 */
function limiterLogger(logger: Logger, storeDown: (err: unknown) => void): LimiterLogger {
  return {
    error: (err, message) => {
      if (message?.includes("error from store")) storeDown(err);
      else logger.warn({ err }, message ?? "express-rate-limit");
    },
    warn: (err, message) => logger.warn({ err }, message ?? "express-rate-limit"),
  };
}

function retryAfterOf(res: Response): string {
  return String(res.getHeader("Retry-After") ?? Math.ceil(WINDOW_MS / 1000));
}

function secondsUntil(resetTime: Date | undefined): number {
  if (!resetTime) return Math.ceil(WINDOW_MS / 1000);
  return Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}
