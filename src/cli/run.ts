import dotenv from "dotenv";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { failureText } from "../core/operator-error.js";
import { explainConnectError } from "../db/connect-errors.js";
import type { Database } from "../db/database.js";
import { EmbeddedDatabaseBusyError } from "../db/embedded-lock.js";
import { migrate } from "../db/migrate.js";
import { openConfiguredDatabase, TIGHTENED_WARNING } from "../db/open.js";
import { commandName } from "./args.js";
import { runCli } from "./cli.js";
import { runThroughServer } from "./control-client.js";
import { USAGE } from "./usage.js";

dotenv.config({ quiet: true });

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || ["help", "--help", "-h"].includes(argv[0]!)) {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const config = loadConfig();
  const io = {
    stdout: (text: string) => void process.stdout.write(text),
    stderr: (text: string) => void process.stderr.write(text),
  };
  // stdout carries the command's output (a key, an export): logs go to stderr.
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel, process.stderr);
  let db: Database;
  try {
    db = openConfiguredDatabase(config, `cli ${commandName(argv)}`, {
      onDataDirTightened: (count) => logger.warn({ dataDir: config.dataDir, tightened: count }, TIGHTENED_WARNING),
    });
  } catch (error) {
    // The embedded database is the running server's: it runs the command (control-channel.ts).
    if (!(error instanceof EmbeddedDatabaseBusyError)) throw error;
    const code = await runThroughServer(config.dataDir, argv, io);
    if (code === undefined) throw error;
    return code;
  }
  try {
    if (argv[0] !== "migrate") await migrate(db, logger);
    return await runCli(argv, { config, db, logger }, io);
  } catch (error) {
    throw explainConnectError(error, config.databaseUrl) ?? error;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(failureText(error));
    process.exitCode = 1;
  },
);
