import dotenv from "dotenv";
import { ConfigError, loadConfig } from "../config.js";
import { EmbeddedDatabaseBusyError } from "../db/embedded-lock.js";
import { migrate } from "../db/migrate.js";
import { openConfiguredDatabase } from "../db/open.js";
import { createLogger } from "../logger.js";
import { runCli, USAGE } from "./cli.js";

dotenv.config({ quiet: true });

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || ["help", "--help", "-h"].includes(argv[0]!)) {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const config = loadConfig();
  // stdout carries the command's output (a key, an export): logs go to stderr.
  const logger = createLogger(config.logLevel === "info" ? "warn" : config.logLevel, process.stderr);
  const db = openConfiguredDatabase(config, `cli ${argv.slice(0, 2).join(" ")}`);
  try {
    if (argv[0] !== "migrate") await migrate(db, logger);
    return await runCli(argv, { config, db, logger }, {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    });
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof EmbeddedDatabaseBusyError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
