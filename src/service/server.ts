import type { RequestListener, Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { KeyCache } from "../auth/key-cache.js";
import { type ControlChannel, startControlChannel } from "../cli/control-channel.js";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { explainConnectError } from "../db/connect-errors.js";
import { type Database, withTimeout } from "../db/database.js";
import { prepareSchema } from "../db/migrate.js";
import { openConfiguredDatabase, TIGHTENED_WARNING } from "../db/open.js";
import { closeRedis, createRedis, type Redis, redisSettled } from "../limits/redis.js";
import { ensureLedger } from "../privacy/ledger.js";
import { EventHub } from "../stream/hub.js";
import { bootstrapFirstUser } from "../users/bootstrap.js";
import { keepKeyCacheInSync } from "../users/key-invalidation.js";
import { KeyUsage } from "../users/key-usage.js";
import { webhookMetrics } from "../webhooks/metrics.js";
import { DeliveryWorker } from "../webhooks/worker.js";
import { createApp, type Lifecycle } from "./app.js";
import { type Background, startBackground } from "./background.js";
import { reportMetricsToPrimary } from "./cluster.js";
import { refuseDrillCopy } from "./drill.js";
import { answerStarting, createHttpServer, lastConnectionAt } from "./http-server.js";
import { bindFirst, listen } from "./listen.js";
import { Metrics, serveMetrics } from "./metrics.js";

/** Stopping: the listener closes once no connection has arrived for ACCEPT_QUIET_MS, or after ACCEPT_DRAIN_MAX_MS. */
const ACCEPT_QUIET_MS = 50;
const ACCEPT_DRAIN_MAX_MS = 1_000;

/** A running instance: the API listener, its metrics listener, and how to stop both. */
export interface Service {
  port: number;
  /** Undefined when METRICS_PORT=off. */
  metricsPort: number | undefined;
  lifecycle: Lifecycle;
  /**
   * Stops gracefully: readiness turns false, the listener stops accepting,
   * requests in flight finish, then the database closes. Connections still
   * busy when `config.shutdownTimeoutMs` has passed are cut. Resolves to
   * whether everything finished in time.
   */
  stop(): Promise<boolean>;
}

/**
 * Binds the API's port (and the metrics port), then opens the database,
 * applies migrations, and serves, with every wait bounded by the
 * configuration. Nothing is left open if it fails.
 */
export async function startService(config: Config, logger: Logger, options: { clusterWorker?: boolean } = {}): Promise<Service> {
  // Until the app is ready (the port is taken first, below), every request is answered 503 STARTING.
  let app: RequestListener = answerStarting;
  let metrics: Metrics | undefined;
  const server = createHttpServer((req, res) => app(req, res), config, logger);
  const metricsServer = config.metricsPort !== undefined && !options.clusterWorker ? serveMetrics({ text: (accept) => metrics!.text(accept) }) : undefined;
  const accept: (() => void)[] = [];
  let db: Database;
  try {
    // A cluster's worker writes nothing at start (its primary migrated, after checking the port), and one
    // restarted must not be handed connections before it can serve them: it listens once ready.
    if (!options.clusterWorker) await listen(server, config.port, config.host, "PORT");
    if (metricsServer) accept.push(await bindFirst(metricsServer, config.metricsPort!, config.metricsHost, "METRICS_PORT"));
    db = openConfiguredDatabase(config, "server", {
      // An idle connection was dropped (server restart, pg_terminate_backend): the pool replaces it.
      onPoolError: (error) => logger.warn({ err: error }, "database connection lost; the pool will open a new one"),
      onDataDirTightened: (count) => logger.warn({ dataDir: config.dataDir, tightened: count }, TIGHTENED_WARNING),
    });
  } catch (error) {
    server.close();
    metricsServer?.close();
    throw error;
  }
  const lifecycle: Lifecycle = { stopping: false };
  let keySync: { stop(): Promise<void> } | undefined;
  let keyUsage: KeyUsage | undefined;
  let redis: Redis | undefined;
  let webhooks: DeliveryWorker | undefined;
  let background: Background | undefined;
  let control: ControlChannel | undefined;
  let events: EventHub | undefined;
  try {
    // Behind a transaction-mode pooler: what falls back, each said once (docs/OPERATIONS.md, "Behind a pooler").
    const { warnings, notes } = await db.checkPooler();
    for (const line of warnings) logger.warn(line);
    for (const line of notes) logger.info(line);
    await prepareSchema(db, logger, config.migrateOnStart);
    await refuseDrillCopy(db, config, logger);
    if (config.erasureLedger && !config.drillMode) await ensureLedger(config.erasureLedger, logger);
    // In cluster mode the primary has done it, once.
    if (!options.clusterWorker) await bootstrapFirstUser(db, config);
    const keyCache = new KeyCache();
    keySync = await keepKeyCacheInSync(db, keyCache, logger);
    keyUsage = new KeyUsage(db.prisma);
    keyUsage.start(logger);
    metrics = new Metrics(db);
    // A worker's metrics are served, added up with the others', by the primary.
    if (options.clusterWorker) reportMetricsToPrimary(metrics);
    if (config.redisUrl) {
      // Shared rate-limit counters. A Redis that is down does not hold the start: each instance counts alone until it is back.
      redis = createRedis(config.redisUrl, logger);
      await redisSettled(redis, 2_000);
    }
    events = new EventHub(db, config, logger);
    // The request durations are served by this process, or by the primary of a cluster: either way only when METRICS_PORT is set.
    app = createApp({ config, db, logger, keyCache, keyUsage, metrics, lifecycle, redis, events, requestMetrics: config.metricsPort !== undefined });
    if (options.clusterWorker) await listen(server, config.port, config.host, "PORT");
    for (const open of accept) open();
    // Delivers the webhook outbox; a failing receiver never touches the API nor /readyz.
    webhooks = new DeliveryWorker(db, config, logger, webhookMetrics(metrics.registry, db));
    await webhooks.start();
    background = await startBackground(db, config, logger, metrics.registry);
    // The embedded database admits this process alone: the CLI's commands come through it.
    if (db.kind === "embedded") control = await startControlChannel(config, db, logger);
  } catch (error) {
    // A failed start (port taken, migration refused) must not leave the database, or its lock, held.
    server.close();
    metricsServer?.close();
    await control?.stop();
    await webhooks?.stop().catch(() => undefined);
    await background?.stop();
    await events?.close().catch(() => undefined);
    await keySync?.stop().catch(() => undefined);
    await keyUsage?.stop().catch(() => undefined);
    if (redis) await closeRedis(redis);
    await db.close().catch(() => undefined);
    throw explainConnectError(error, config.databaseUrl) ?? error;
  }

  const port = (server.address() as AddressInfo).port;
  const metricsPort = metricsServer ? (metricsServer.address() as AddressInfo).port : undefined;
  logger.info(
    {
      host: config.host,
      port,
      pid: process.pid,
      database: db.kind,
      metrics: options.clusterWorker ? "via the primary" : metricsPort === undefined ? "off" : `${config.metricsHost}:${metricsPort}`,
    },
    `listening on http://${config.host}:${port}/api`,
  );
  // 0 is "any free port", not "off": whoever meant off is told, with the port to find them on.
  if (config.metricsPort === 0 && metricsPort !== undefined) {
    logger.info({ metricsPort }, `METRICS_PORT=0: the metrics are served on a free port, ${config.metricsHost}:${metricsPort}; METRICS_PORT=off serves none`);
  }
  // What the stop closes, as the start left it.
  const parts = { config, logger, lifecycle, server, metricsServer, keySync, keyUsage, redis, db, webhooks, background, control, events };
  let stopped: Promise<boolean> | undefined;
  return { port, metricsPort, lifecycle, stop: () => (stopped ??= stopGracefully(parts)) };
}

async function stopGracefully(parts: {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
  server: Server;
  metricsServer: Server | undefined;
  keySync: { stop(): Promise<void> } | undefined;
  keyUsage: KeyUsage;
  redis: Redis | undefined;
  db: Database;
  webhooks: DeliveryWorker;
  background: Background;
  control: ControlChannel | undefined;
  events: EventHub;
}): Promise<boolean> {
  const { config, logger, lifecycle, server, metricsServer, keySync, keyUsage, redis, db, webhooks, background, control, events } = parts;
  lifecycle.stopping = true;
  // Event streams never finish by themselves: ended now, so that their clients resume on another instance
  // at once, and a stream asked for from now on is refused (503).
  const streamsClosed = events.close();
  const deadline = Date.now() + config.shutdownTimeoutMs;

  // Connections a client opened just before the stop may still wait in the
  // kernel's accept queue: closing the listener now would reset them. It stays
  // open until no connection has come for ACCEPT_QUIET_MS (at most
  // ACCEPT_DRAIN_MAX_MS), while /readyz already says "stopping".
  const drainUntil = Math.min(Date.now() + ACCEPT_DRAIN_MAX_MS, deadline);
  // Each check waits for setImmediate, which runs after the event loop's poll phase: on a busy
  // process a timer can fire late, and connections already in the backlog must be accepted (and
  // counted) before the quiet period is judged, or closing would reset them.
  do {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setImmediate(resolve));
  } while (Date.now() - lastConnectionAt(server) < ACCEPT_QUIET_MS && Date.now() < drainUntil);

  // No new connections. http.Server#close would also drop every idle connection at once, racing a
  // request its client (a balancer's pool) sends on it at that moment: a reset, or a 502 for a POST.
  // So the listener alone closes now, every answer from now on says Connection: close, and an idle
  // connection is left to its client until KEEP_ALIVE_TIMEOUT_MS, as Node's keep-alive timer does
  // (deploy/nginx.conf lets go of its own first); whatever is still idle at half the deadline is closed.
  const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
  let sweeper: NodeJS.Timeout | undefined;
  const grace = setTimeout(
    () => {
      server.closeIdleConnections();
      sweeper = setInterval(() => server.closeIdleConnections(), 100);
    },
    Math.min(config.keepAliveTimeoutMs, config.shutdownTimeoutMs / 2),
  );
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    }),
  ]);
  clearTimeout(grace);
  clearInterval(sweeper);
  clearTimeout(timer);
  if (!inTime) {
    logger.warn({ shutdownTimeoutMs: config.shutdownTimeoutMs }, "shutdown deadline passed: cutting the connections still open");
    server.closeAllConnections();
    await closed;
  }
  metricsServer?.closeAllConnections();
  metricsServer?.close();
  // The rest waits on the network too (a transaction still open, a slow Redis): all of it together gets
  // what is left of the deadline (at least half a second), so that the process ends in time.
  const closeBy = Math.max(deadline, Date.now() + 500);
  const left = () => Math.max(0, closeBy - Date.now());
  const bounded = (what: string, work: Promise<unknown>) =>
    withTimeout(work, left(), `${what} did not finish by the deadline`).catch((error: unknown) => logger.warn({ err: error }, `closing: ${what} failed`));
  await bounded("the event streams", streamsClosed);
  await bounded("the CLI commands in flight", control?.stop() ?? Promise.resolve());
  await bounded("the webhook deliveries in flight", webhooks.stop());
  await bounded("the retention sweep and the leaderboards' periods", background.stop());
  await bounded("the key channel", keySync?.stop() ?? Promise.resolve());
  // The minutes keys were last used in, noted since the last write: written before the database closes.
  await bounded("the keys' last use", keyUsage.stop());
  if (redis) await bounded("Redis", closeRedis(redis));
  await bounded("the database", db.close());
  logger.info({ graceful: inTime }, "stopped");
  return inTime;
}
