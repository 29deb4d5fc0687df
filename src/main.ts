import cluster from "node:cluster";
import dotenv from "dotenv";
import { runPrimary } from "./service/cluster.js";
import { ConfigError, loadConfig } from "./core/config.js";
import { DatabaseConnectError } from "./db/connect-errors.js";
import { EmbeddedDatabaseBusyError } from "./db/embedded-lock.js";
import { ListenError } from "./service/listen.js";
import { createLogger, type Logger } from "./core/logger.js";
import { startService } from "./service/server.js";

dotenv.config({ quiet: true });

async function main(): Promise<void> {
  const config = loadConfig();
  const root = createLogger(config.logLevel);
  if (config.webConcurrency > 1 && cluster.isPrimary) {
    await runPrimary(config, root);
    return;
  }
  const worker = cluster.isWorker ? cluster.worker : undefined;
  const logger = worker ? root.child({ worker: worker.id }) : root;

  // Signal handlers go in before anything can announce that we are up: without
  // one, SIGTERM's default action kills the process on the spot, skipping the
  // release of the database (and of the embedded database's lock). A signal
  // that comes while starting is answered once the start is over.
  const starting = startService(config, logger, { clusterWorker: worker !== undefined });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, deadlineMs: config.shutdownTimeoutMs }, "shutting down");
    void starting
      .then(
        (service) => service.stop(),
        () => false,
      )
      .then((graceful) => exit(logger, graceful ? 0 : 1));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  await starting;
}

function exit(logger: Logger, code: number): void {
  logger.flush();
  process.exit(code);
}

main().catch((error: unknown) => {
  const oneLine = [ConfigError, EmbeddedDatabaseBusyError, ListenError, DatabaseConnectError].some((kind) => error instanceof kind);
  if (oneLine) {
    process.stderr.write(`${(error as Error).message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
