import cluster, { type Worker } from "node:cluster";
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AggregatorRegistry } from "prom-client";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { explainConnectError } from "../db/connect-errors.js";
import { prepareSchema } from "../db/migrate.js";
import { openConfiguredDatabase, TIGHTENED_WARNING } from "../db/open.js";
import { bootstrapFirstUser } from "../users/bootstrap.js";
import { bindFirst, checkPort } from "./listen.js";
import type { Metrics } from "./metrics.js";

/** At this many worker deaths within a minute the primary stops restarting them and gives up. */
const MAX_RESTARTS_PER_MINUTE = 5;

/**
 * WEB_CONCURRENCY > 1: this process applies the migrations once, then forks
 * the workers, which share the port (node:cluster hands connections out) and
 * are each a full instance. It restarts a worker that dies, serves the
 * workers' metrics added up on METRICS_PORT, and on SIGTERM/SIGINT passes the
 * signal on and waits for every worker to stop gracefully.
 */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  // The ports before the database: a start that cannot listen writes nothing (no first user, no key printed).
  // The workers take PORT later; checked here. METRICS_PORT is the primary's own: bound now.
  await checkPort(config.port, config.host, "PORT");
  const metricsServer = config.metricsPort === undefined ? undefined : await serveClusterMetrics(config, config.metricsPort);
  const db = openConfiguredDatabase(config, "server", {
    onDataDirTightened: (count) => logger.warn({ dataDir: config.dataDir, tightened: count }, TIGHTENED_WARNING),
  });
  try {
    await prepareSchema(db, logger, config.migrateOnStart);
    await bootstrapFirstUser(db, config);
  } catch (error) {
    metricsServer?.server.close();
    throw explainConnectError(error, config.databaseUrl) ?? error;
  } finally {
    await db.close();
  }

  let stopping = false;
  const restarts: number[] = [];
  const fork = () => cluster.fork();
  cluster.on("exit", (worker: Worker, code: number | null, signal: string | null) => {
    if (stopping) return;
    logger.error({ worker: worker.id, code, signal }, "worker died");
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length >= MAX_RESTARTS_PER_MINUTE) {
      logger.fatal({ restarts: restarts.length }, "workers keep dying: stopping");
      void stop("worker crash loop", 1);
      return;
    }
    setTimeout(fork, 1_000).unref();
  });
  for (let i = 0; i < config.webConcurrency; i++) fork();

  if (metricsServer) {
    metricsServer.accept();
    const port = (metricsServer.server.address() as AddressInfo).port;
    logger.info({ metrics: `${config.metricsHost}:${port}`, workers: config.webConcurrency }, "primary serving the workers' metrics");
  }

  const stop = async (reason: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, workers: Object.keys(cluster.workers ?? {}).length }, "stopping the workers");
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exits = workers.map(
      (worker) =>
        new Promise<number | null>((resolve) => {
          if (worker.isDead()) resolve(worker.process.exitCode ?? null);
          else worker.once("exit", (exitCode: number | null) => resolve(exitCode));
        }),
    );
    for (const worker of workers) worker.process.kill("SIGTERM");
    // Each worker has SHUTDOWN_TIMEOUT_MS; a worker that outlives it by far is killed.
    const killer = setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill("SIGKILL");
    }, config.shutdownTimeoutMs + 5_000);
    const codes = await Promise.all(exits);
    clearTimeout(killer);
    metricsServer?.server.close();
    const clean = codes.every((c) => c === 0);
    logger.info({ codes, graceful: clean }, "stopped");
    logger.flush();
    process.exit(code !== 0 ? code : clean ? 0 : 1);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/** The workers' metrics added up, on METRICS_PORT: bound at once, answering from `accept()` on. */
async function serveClusterMetrics(config: Config, port: number): Promise<{ server: Server; accept(): void }> {
  const aggregator = new AggregatorRegistry();
  const server = createServer((req, res) => {
    if ((req.url ?? "/").split("?")[0] !== "/metrics" || req.method !== "GET") {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found: the metrics are at GET /metrics\n");
      return;
    }
    aggregator.clusterMetrics().then(
      (body) => res.writeHead(200, { "Content-Type": aggregator.contentType }).end(body),
      (error: unknown) => res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8" }).end(`metrics unavailable: ${String(error)}\n`),
    );
  });
  return { server, accept: await bindFirst(server, port, config.metricsHost, "METRICS_PORT") };
}

/** In a worker: its metrics are collected by the primary instead of served. */
export function reportMetricsToPrimary(metrics: Metrics): void {
  AggregatorRegistry.setRegistries([metrics.registry]);
  // The constructor sets up the worker's answer to the primary's requests.
  new AggregatorRegistry();
}
