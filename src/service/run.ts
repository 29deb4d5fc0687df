import cluster from "node:cluster";
import dotenv from "dotenv";
import { loadConfig } from "../core/config.js";
import { createLogger, type Logger } from "../core/logger.js";
import { failureText } from "../core/operator-error.js";
import { runPrimary } from "./cluster.js";
import { startService } from "./server.js";
import { startTracing } from "./tracing-setup.js";

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
  // Before the app is built (it reads whether tracing is on once); nothing is loaded when it is off.
  const tracing = await startTracing(config, logger);

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
      .then(async (graceful) => {
        // The spans of the last requests, exported within OTEL_BSP_EXPORT_TIMEOUT at most.
        await tracing?.shutdown();
        exit(logger, graceful ? 0 : 1);
      });
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
  process.stderr.write(failureText(error, "Failed to start: "));
  process.exit(1);
});
