import express, { type Express } from "express";
import { CallerDirectory } from "./auth/callers.js";
import { Bulkhead } from "./http/bulkhead.js";
import type { KeyCache } from "./auth/key-cache.js";
import type { Config } from "./config.js";
import { requestContext } from "./context.js";
import type { Database } from "./db/database.js";
import { errors } from "./errors.js";
import { withTimeout } from "./db/database.js";
import { isDatabaseUnavailable } from "./db/prisma-errors.js";
import { docsRouter } from "./http/docs.js";
import { errorHandler } from "./http/error-handler.js";
import { buildOpenApiDocument } from "./http/openapi.js";
import { createRateLimits, type RateLimitKind } from "./http/rate-limit.js";
import { parseQueryString } from "./http/query.js";
import { requestLifecycle } from "./http/request-context.js";
import { securityHeaders } from "./http/security-headers.js";
import { registerRoutes } from "./http/register-routes.js";
import type { RouteSpec } from "./http/route.js";
import type { Logger } from "./logger.js";
import type { Redis } from "./redis.js";
import { apiRoutes } from "./resources/index.js";
import { ApiUsers } from "./users/users.js";
import { recordAudit } from "./audit/audit.js";
import { Metrics } from "./metrics.js";
import type { AppDeps, RefusedAddress } from "./deps.js";


/** What /readyz reports besides the database: set when the process begins to stop. */
export interface Lifecycle {
  stopping: boolean;
}

/** How long /readyz waits for the database before calling the instance unready. */
const READINESS_TIMEOUT_MS = 1_000;

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
  /** Defaults to a registry of the app's own. */
  metrics?: Metrics;
  /** Shared with the process entry, which marks it stopping on SIGTERM. */
  lifecycle?: Lifecycle;
  /** Records a refused client address; defaults to recording nothing beyond the log line. */
  onRefusedAddress?: (event: RefusedAddress) => Promise<void>;
  /**
   * The client of REDIS_URL (made by createRedis, closed by its owner): the
   * rate-limit counters are kept there, shared by every instance. Required
   * when REDIS_URL is set; without it, counters live in this process.
   */
  redis?: Redis;
  /** Prefix of the rate-limit keys in Redis (default: REDIS_KEY_PREFIX); tests use their own. */
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
  metrics = new Metrics(db, { processMetrics: false }),
  lifecycle = { stopping: false },
  // A key used from an address its user may not use it from: one audit entry, in a transaction of its own.
  onRefusedAddress = (e) =>
    recordAudit(db.prisma, {
      actor: e.username,
      action: "api_user.refused_ip",
      target: `api_user:${e.username}`,
      requestId: e.requestId,
      clientAddress: e.clientAddress,
    }),
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
    // No single API user may take every slot.
    heavyLists: new Bulkhead(config.heavyListsAtOnce, Math.max(1, config.heavyListsAtOnce - 1)),
    metrics,
    onRefusedAddress,
  };
  metrics.watchHeavyLists(deps.heavyLists);

  const app = express();
  app.disable("x-powered-by");
  // Which X-Forwarded-For hops name the client (req.ip), for the per-address limit and the
  // per-user address allow-lists: only the configured proxies.
  app.set("trust proxy", config.trustProxy);
  // No body-hash ETag on every response: conditional requests come from a cheap version, per route.
  app.set("etag", false);
  app.set("query parser", parseQueryString);
  app.use(requestLifecycle(logger));
  app.use(metrics.middleware());
  app.use(securityHeaders);
  app.use((req, res, next) => {
    // Conditional GETs are answered by the routes that have a version (http/read.ts), nowhere else:
    // Express would answer `If-None-Match: *` with a 304 on any route (the probes, the documents).
    Object.defineProperty(req, "fresh", { value: false });
    // Stopping: clients must not send another request on this connection. Decided when the answer's
    // head is written, so that requests already in flight when the stop began say so too.
    const writeHead = res.writeHead.bind(res);
    res.writeHead = ((...args: Parameters<typeof res.writeHead>) => {
      if (lifecycle.stopping) res.setHeader("Connection", "close");
      return writeHead(...args);
    }) as typeof res.writeHead;
    next();
  });
  app.use(healthRouter(db, lifecycle));

  const api = express.Router();
  api.use(Metrics.mountPoint());
  api.use(docsRouter(buildOpenApiDocument(routes), config.publicUrl));
  const limits = createRateLimits({
    config,
    logger,
    redis,
    prefix: rateLimitPrefix,
    onLimited: (kind) => {
      metrics.rateLimited(kind);
      onRateLimited?.(kind);
    },
    onCountingLocally: (locally) => metrics.rateLimitCountingLocally(locally),
  });
  registerRoutes(api, routes, deps, limits);
  app.use("/api", api);

  app.use((req) => {
    throw errors.routeNotFound(req.method, req.originalUrl.split("?")[0] ?? req.path);
  });
  app.use(errorHandler(logger));
  return app;
}

/**
 * Probes for orchestrators and load balancers, outside /api and without a key.
 * /livez: the process answers (restart it if not). /readyz: it can serve —
 * the database answers within a second and the process is not stopping
 * (send it no traffic if not; do not restart it for that).
 */
function healthRouter(db: Database, lifecycle: Lifecycle): express.Router {
  const router = express.Router();
  router.get("/livez", (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    if (lifecycle.stopping) throw errors.shuttingDown();
    try {
      await withTimeout(db.ping(READINESS_TIMEOUT_MS), READINESS_TIMEOUT_MS, "database did not answer");
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw errors.databaseUnavailable();
      throw error;
    }
    res.json({ status: "ready", database: db.kind });
  });
  return router;
}
