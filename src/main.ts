import { once } from "node:events";
import type { Server } from "node:http";
import dotenv from "dotenv";
import { createApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { EmbeddedDatabaseBusyError } from "./db/embedded-lock.js";
import { migrate } from "./db/migrate.js";
import { openConfiguredDatabase } from "./db/open.js";
import { createLogger } from "./logger.js";
import { KeyCache } from "./auth/key-cache.js";
import { keepKeyCacheInSync } from "./auth/key-invalidation.js";
import { createFirstUser, firstUserBanner } from "./users/bootstrap.js";
import { ApiUsers } from "./users/users.js";

dotenv.config({ quiet: true });

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = openConfiguredDatabase(config, "server");

  // Signal handlers go in before anything can announce that we are up: without
  // one, SIGTERM's default action kills the process on the spot, skipping the
  // release of the database (and of the embedded database's lock).
  let server: Server | undefined;
  let keySync: { stop(): Promise<void> } | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    if (server?.listening) {
      const closed = new Promise((resolve) => server!.close(resolve));
      server.closeIdleConnections();
      await closed;
    }
    await keySync?.stop();
    await db.close();
    logger.flush();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  try {
    await migrate(db, logger);
    if (db.kind === "embedded") {
      const first = await createFirstUser(new ApiUsers(db.prisma), config);
      if (first) process.stdout.write(firstUserBanner(first.username, first.apiKey));
    }
    const keyCache = new KeyCache();
    keySync = await keepKeyCacheInSync(db, keyCache, logger);
    const app = createApp({ config, db, logger, keyCache });
    server = app.listen(config.port, config.host);
    await once(server, "listening");
  } catch (error) {
    // A failed start (port taken, migration refused) must not leave the database, or its lock, held.
    await keySync?.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  logger.info({ host: config.host, port, database: db.kind }, `listening on http://${config.host}:${port}/api`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof EmbeddedDatabaseBusyError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
