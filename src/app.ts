import express, { type Express } from "express";
import { CallerDirectory } from "./auth/callers.js";
import { Bulkhead } from "./http/bulkhead.js";
import type { KeyCache } from "./auth/key-cache.js";
import type { Config } from "./config.js";
import { requestContext } from "./context.js";
import type { Database } from "./db/database.js";
import { errors } from "./errors.js";
import { docsRouter } from "./http/docs.js";
import { errorHandler } from "./http/error-handler.js";
import { buildOpenApiDocument } from "./http/openapi.js";
import { createRateLimits, type RateLimitKind } from "./http/rate-limit.js";
import { requestLifecycle } from "./http/request-context.js";
import { registerRoutes, type RouteSpec } from "./http/route.js";
import type { Logger } from "./logger.js";
import type { Redis } from "./redis.js";
import { apiRoutes } from "./resources/index.js";
import { ApiUsers } from "./users/users.js";

/**
 * The headers a JSON API needs, set in one step: helmet's full chain of
 * middleware cost ~28 µs a request for headers that mostly concern HTML
 * pages. The docs page, the only HTML, gets helmet's (http/docs.ts).
 */
const JSON_HEADERS: [string, string][] = [
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Strict-Transport-Security", "max-age=31536000; includeSubDomains"],
];
function securityHeaders(_req: express.Request, res: express.Response, next: express.NextFunction): void {
  for (const [name, value] of JSON_HEADERS) res.setHeader(name, value);
  next();
}

/** What handlers may use. Built once per app, so tests build their own. */
export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  users: ApiUsers;
  callers: CallerDirectory;
  requestContext: typeof requestContext;
  /** The time, for "now" in handlers; tests set it. */
  now: () => Date;
  /** How many full lists are built and sent at once. */
  heavyLists: Bulkhead;
}

export interface AppOptions {
  config: Config;
  db: Database;
  logger: Logger;
  /** Defaults to the twelve routes of the spec; tests may add their own. */
  routes?: readonly RouteSpec[];
  /** Defaults to the system clock. */
  now?: () => Date;
  /** Authenticated keys kept in memory; without one, every request looks its key up. */
  keyCache?: KeyCache;
  /**
   * The client of REDIS_URL (made by createRedis, closed by its owner): the
   * rate-limit counters are kept there, shared by every instance. Required
   * when REDIS_URL is set; without it, counters live in this process.
   */
  redis?: Redis;
  /** Prefix of the rate-limit keys in Redis (default `rl:`); tests use their own. */
  rateLimitPrefix?: string;
  /** Called on every 429 of a rate limit, naming which one (for metrics). */
  onRateLimited?: (kind: RateLimitKind) => void;
}

export function createApp({
  config,
  db,
  logger,
  routes = apiRoutes,
  now = () => new Date(),
  keyCache,
  redis,
  rateLimitPrefix,
  onRateLimited,
}: AppOptions): Express {
  if (config.redisUrl && !redis && (config.rateLimitPerMinute > 0 || config.authFailuresPerMinute > 0)) {
    // Counting in memory while the operator asked for shared counters would multiply the limit by the instances.
    throw new Error("REDIS_URL is set: pass its client (createRedis) to createApp");
  }
  const deps: AppDeps = {
    config,
    db,
    logger,
    users: new ApiUsers(db.prisma, keyCache),
    callers: new CallerDirectory(config.callers),
    requestContext,
    now,
    heavyLists: new Bulkhead(config.heavyListsAtOnce),
  };

  const app = express();
  app.disable("x-powered-by");
  // No body-hash ETag on every response: conditional requests come from a cheap version, per route.
  app.set("etag", false);
  // Which X-Forwarded-For hops name the client (req.ip), for the per-address limit: only the configured proxies.
  app.set("trust proxy", config.trustProxy);
  app.use(requestLifecycle(logger));
  app.use(securityHeaders);

  const api = express.Router();
  api.use(docsRouter(buildOpenApiDocument(routes)));
  const limits = createRateLimits({
    config,
    logger,
    ...(redis ? { redis } : {}),
    ...(rateLimitPrefix ? { prefix: rateLimitPrefix } : {}),
    ...(onRateLimited ? { onLimited: onRateLimited } : {}),
  });
  registerRoutes(api, routes, deps, limits);
  app.use("/api", api);

  app.use((req) => {
    throw errors.routeNotFound(req.method, req.originalUrl.split("?")[0] ?? req.path);
  });
  app.use(errorHandler(logger));
  return app;
}
