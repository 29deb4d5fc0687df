import type { Config } from "../core/config.js";
import { makeDataDirOwnerOnly } from "./data-dir.js";
import { type Database, openDatabase } from "./database.js";

export interface OpenHooks {
  /** An idle pool connection was dropped (PostgreSQL). */
  onPoolError?: (error: Error) => void;
  /** The embedded data folder held entries others could read or write, now tightened (data-dir.ts). */
  onDataDirTightened?: (count: number) => void;
}

/** The database the configuration names: a PostgreSQL server, or the embedded one in DATA_DIR. */
export function openConfiguredDatabase(config: Config, command: string, hooks: OpenHooks = {}): Database {
  if (config.databaseUrl) {
    return openDatabase({
      kind: "postgres",
      url: config.databaseUrl,
      poolMax: config.dbPoolMax,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      readUrl: config.databaseReadUrl,
      directUrl: config.databaseDirectUrl,
      preparedStatements: config.dbPreparedStatements,
      onPoolError: hooks.onPoolError,
    });
  }
  const tightened = makeDataDirOwnerOnly(config.dataDir);
  if (tightened > 0) hooks.onDataDirTightened?.(tightened);
  const db = openDatabase({ kind: "embedded", dataDir: config.dataDir, command });
  // Starting on a new folder, PGlite writes its files 0666 past the umask (it sets their modes itself): tightened once it is ready.
  const connect = db.connect.bind(db);
  let ready = false;
  db.connect = async () => {
    const connection = await connect();
    if (!ready) {
      ready = true;
      makeDataDirOwnerOnly(config.dataDir);
    }
    return connection;
  };
  return db;
}

/** The warning for onDataDirTightened: one line. */
export const TIGHTENED_WARNING = "DATA_DIR held files or folders other users could read or write: made the owner's alone (files 0600, folders 0700)";
