import type { Config } from "../config.js";
import { openDatabase, type Database } from "./database.js";

/** The database the configuration names: a PostgreSQL server, or the embedded one in DATA_DIR. */
export function openConfiguredDatabase(config: Config, command: string, onPoolError?: (error: Error) => void): Database {
  return config.databaseUrl
    ? openDatabase({
        kind: "postgres",
        url: config.databaseUrl,
        poolMax: config.dbPoolMax,
        connectTimeoutMs: config.dbConnectTimeoutMs,
        statementTimeoutMs: config.dbStatementTimeoutMs,
        readUrl: config.databaseReadUrl,
        preparedStatements: config.dbPreparedStatements,
        onPoolError,
      })
    : openDatabase({ kind: "embedded", dataDir: config.dataDir, command });
}
