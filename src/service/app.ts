import { ServerResponse } from "node:http";
import express, { type Express } from "express";
import { consoleRouter } from "../admin/console.js";
import { docsRouter } from "../api-document/docs.js";
import { buildOpenApiDocument } from "../api-document/openapi.js";
import { recordAudit } from "../audit/audit.js";
import { ipAddressOrNothing } from "../auth/address-allow-list.js";
import { CallerDirectory } from "../auth/callers.js";
import type { KeyCache } from "../auth/key-cache.js";
import { requestContext } from "../core/context.js";
import { errors } from "../core/errors.js";
import type { Database } from "../db/database.js";
import { withTimeout } from "../db/database.js";
import { isDatabaseUnavailable } from "../db/prisma-errors.js";
import { frozenWrite } from "../db/service-state.js";
import { errorHandler } from "../http/error-handler.js";
import { parseQueryString } from "../http/query.js";
import { directRoutes, registerRoutes } from "../http/register-routes.js";
import { requestLifecycle } from "../http/request-context.js";
import type { RouteSpec } from "../http/route.js";
import { Bulkhead } from "../limits/bulkhead.js";
import { createRateLimits, type RateLimitKind } from "../limits/rate-limit.js";
import type { Redis } from "../limits/redis.js";
import { apiRoutes } from "../resources/index.js";
import { EventHub } from "../stream/hub.js";
import type { KeyUsage } from "../users/key-usage.js";
import { ApiUsers } from "../users/users.js";
import { Metrics } from "./metrics.js";

/** Where a request keeps its client address once worked out (null: none). */
const CLIENT_IP = Symbol("clientIp");

import type { Logger } from "../core/logger.js";
import type { AppDeps, RefusedAddress } from "../http/deps.js";

/** What /readyz reports besides the database: set when the process begins to stop. */
export interface Lifecycle {
  stopping: boolean;
}

/** How long /readyz waits for the database before calling the instance unready. */
const READINESS_TIMEOUT_MS = 1_000;

/**
 * What createApp takes: the configuration, the database and the logger; the
 * rest has defaults. service/server.ts passes what the process shares (the Redis
 * client, the key cache, the metrics registry, the stopping flag); tests pass
 * their routes, clock and hooks.
 */
export interface AppOptions extends Pick<AppDeps, "config" | "db" | "logger">, Partial<Pick<AppDeps, "now" | "onRefusedAddress" | "events">> {
  /** The registry the requests, the heavy-list slots and the rate limits are counted in (server.ts shares one). */
  metrics?: Metrics;
  /**
   * The client of REDIS_URL (made by createRedis, closed by its owner): the
   * rate-limit counters are kept there, shared by every instance. Required
   * when REDIS_URL is set; without it, counters live in this process.
   */
  redis?: Redis;
  /** Authenticated keys kept in memory; without one, every request looks its key up. */
  keyCache?: KeyCache;
  /** Where each key's last use is noted (written by its own timer); without it, last use is not recorded. */
  keyUsage?: KeyUsage;
  /** Shared with the process entry, which marks it stopping on SIGTERM. */
  lifecycle?: Lifecycle;
  /**
   * Whether each request's duration goes into the metrics (default: yes).
   * service/server.ts says no when no metrics are served (METRICS_PORT off): no one could read them.
   */
  requestMetrics?: boolean;
  /** Every route of the API (resources/index.ts) unless given (tests add their own). */
  routes?: readonly RouteSpec[];
  /** Called on every 429 of a rate limit, naming which one (the metrics count them too). */
  onRateLimited?: (kind: RateLimitKind) => void;
  /** The window of the rate limits: a minute, as RATE_LIMIT_PER_MINUTE says, unless given (tests shorten it). */
  rateLimitWindowMs?: number;
}

/**
 * A key used from an address its user may not use it from: one audit entry, in a transaction of its own.
 * While writes are frozen (`cli freeze`) the entry cannot be written: the refusal goes to the log instead.
 */
const auditRefusedAddress =
  (db: Database, logger: Logger) =>
  (e: RefusedAddress): Promise<void> =>
    recordAudit(db.prisma, {
      actor: e.username,
      action: "api_user.refused_ip",
      target: `api_user:${e.username}`,
      requestId: e.requestId,
      clientAddress: e.clientAddress,
    }).catch((error: unknown) => {
      if (!frozenWrite(error)) throw error;
      logger.warn(
        { username: e.username, clientAddress: e.clientAddress },
        "a key was used from an address its user may not use it from (not in the audit log: writes are frozen)",
      );
    });

export function createApp(options: AppOptions): Express {
  const { config, db, logger, redis, lifecycle = { stopping: false }, routes = apiRoutes, onRateLimited } = options;
  if (config.redisUrl && !redis && (config.rateLimitPerMinute > 0 || config.authFailuresPerMinute > 0)) {
    // Counting in memory while the operator asked for shared counters would multiply the limit by the instances.
    throw new Error("REDIS_URL is set: pass its client (createRedis) to createApp");
  }
  const deps: AppDeps = {
    config,
    db,
    logger,
    users: new ApiUsers(db.prisma, options.keyCache, undefined, options.keyUsage),
    callers: new CallerDirectory(config.callers),
    requestContext,
    now: options.now ?? (() => new Date()),
    // No single API user may take every slot.
    heavyLists: new Bulkhead(config.heavyListsAtOnce, Math.max(1, config.heavyListsAtOnce - 1)),
    onRefusedAddress: options.onRefusedAddress ?? auditRefusedAddress(db, logger),
    // Its owner closes it (server.ts on stopping); it listens only once a stream opens.
    events: options.events ?? new EventHub(db, config, logger),
  };
  const metrics = options.metrics ?? new Metrics(db, { processMetrics: false });
  metrics.watchHeavyLists(deps.heavyLists);

  const app = express();
  app.disable("x-powered-by");
  // Which X-Forwarded-For hops name the client (req.ip), for the per-address limit and the
  // per-user address allow-lists: only the configured proxies.
  app.set("trust proxy", config.trustProxy);
  // Behind a trusted proxy req.ip is the client's own X-Forwarded-For text: anything but an IP address
  // is no address (undefined), everywhere it goes (audit entries, allow-lists, per-address limits).
  // Worked out once per request (Express's getter parses X-Forwarded-For at every read; the limits, the log and the audit each read it).
  // Trusting no proxy (TRUST_PROXY false or 0, the default), the client is the connection's peer, as Express
  // would say after parsing X-Forwarded-For only to drop it; an address the kernel gave needs no check.
  const trustsNoProxy = config.trustProxy === false || config.trustProxy === 0;
  Object.defineProperty(app.request, "ip", {
    configurable: true,
    get(this: express.Request & { [CLIENT_IP]?: string | null }) {
      if (this[CLIENT_IP] !== undefined) return this[CLIENT_IP] ?? undefined;
      if (trustsNoProxy) {
        const peer = this.socket.remoteAddress;
        this[CLIENT_IP] = peer ?? null;
        return peer;
      }
      const forwarded: unknown = Reflect.get(express.request, "ip", this);
      const ip = typeof forwarded === "string" ? ipAddressOrNothing(forwarded) : undefined;
      this[CLIENT_IP] = ip ?? null;
      return ip;
    },
  });
  // No body-hash ETag on every response: conditional requests come from a cheap version, per route.
  app.set("etag", false);
  app.set("query parser", parseQueryString);
  // Conditional GETs are answered by the routes that have a version (http/read.ts), nowhere else:
  // Express would answer `If-None-Match: *` with a 304 on any route (the probes, the documents).
  // Set once on the app's request prototype (Express gives each request this app's), not per request.
  Object.defineProperty(app.request, "fresh", { configurable: true, get: () => false });
  // Stopping: clients must not send another request on this connection. Decided when the answer's
  // head is written, so that requests already in flight when the stop began say so too.
  const writeHead = (ServerResponse.prototype as { writeHead: (this: ServerResponse, ...args: unknown[]) => ServerResponse }).writeHead;
  app.response.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (lifecycle.stopping) this.setHeader("Connection", "close");
    return writeHead.apply(this, args);
  } as typeof app.response.writeHead;
  const api = express.Router();
  api.use(Metrics.mountPoint());
  const limits = createRateLimits({
    config,
    logger,
    redis,
    onLimited: (kind) => {
      metrics.rateLimited(kind);
      onRateLimited?.(kind);
    },
    onCountingLocally: (locally) => metrics.rateLimitCountingLocally(locally),
    windowMs: options.rateLimitWindowMs,
  });
  const compiled = registerRoutes(api, routes, deps, limits);
  // After the routes: a route's request need not pass through the documents' router on its way.
  api.use(docsRouter(buildOpenApiDocument(routes), config.publicUrl));

  app.use(
    requestLifecycle(
      logger,
      options.requestMetrics === false ? undefined : (req, res, seconds, traceId) => metrics.requestFinished(req, res, seconds, traceId),
    ),
  );
  // The routes' own requests, by exact path, before any router: the rest goes on below.
  app.use(directRoutes("/api", compiled));
  healthRoutes(app, db, lifecycle);
  app.use(consoleRouter());
  app.use("/api", api);

  // A path that is a route once /api is put in front: the caller forgot the prefix, and is told so.
  const apiPaths = new Set([...routes.map((route) => `/api${route.path}`), "/api/docs", "/api/openapi.json"]);
  app.use((req) => {
    const path = req.originalUrl.split("?")[0] ?? req.path;
    throw errors.routeNotFound(req.method, path, apiPaths.has(`/api${path}`) ? `/api${path}` : undefined);
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
function healthRoutes(router: Express, db: Database, lifecycle: Lifecycle): void {
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
}
