import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { isMainThread } from "node:worker_threads";
import { OperatorError } from "../core/operator-error.js";

/** DATA_DIR cannot be made, written or tightened: a folder to mount writable or give to this user. */
export class DataDirError extends OperatorError {}

function explain(error: unknown, dataDir: string): unknown {
  const code = (error as { code?: string }).code;
  const where = `The data folder ${dataDir} (DATA_DIR)`;
  const instead = "or set DATA_DIR to a folder it may write, or DATABASE_URL to use a PostgreSQL server";
  const user = `this process (uid ${process.getuid?.() ?? "?"})`;
  switch (code) {
    case "EROFS":
      return new DataDirError(`${where} is on a read-only file system: mount it read-write (a container's volume without :ro), ${instead}.`, { cause: error });
    case "EACCES":
    case "EPERM":
      return new DataDirError(`${where} cannot be created or written by ${user}: permission denied. Give it to this user (chown), ${instead}.`, {
        cause: error,
      });
    case "ENOTDIR":
    case "EEXIST":
      return new DataDirError(`${where} cannot be a folder: a file is in the way on its path. Move that file, ${instead}.`, { cause: error });
    case "ENOSPC":
      return new DataDirError(`${where} is on a full file system: free some space, ${instead}.`, { cause: error });
    default:
      return error;
  }
}

/**
 * The embedded database's folder is its owner's alone (docs/SECURITY.md, "The embedded data folder"): the
 * process that opens it takes umask 077 for good, and what an earlier start or PGlite's first start left
 * looser is tightened here. Returns how many files and folders were tightened; a folder that cannot be
 * made or written is a DataDirError, in one line.
 */
export function makeDataDirOwnerOnly(dataDir: string): number {
  try {
    return tighten(dataDir);
  } catch (error) {
    throw explain(error, dataDir);
  }
}

function tighten(dataDir: string): number {
  // A worker thread may not change the umask (tests); the server and the CLI are main threads.
  if (isMainThread) process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // A folder already there and owner-only, but read-only (a volume mounted :ro): said now, not by PGlite later.
  accessSync(dataDir, constants.W_OK);
  let tightened = 0;
  const visit = (entry: string) => {
    const stat = lstatSync(entry);
    if (stat.isSymbolicLink()) return; // chmod would change what it points to, which is not the folder's
    if ((stat.mode & 0o077) !== 0) {
      chmodSync(entry, stat.mode & 0o700);
      tightened++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(entry)) visit(path.join(entry, name));
  };
  visit(dataDir);
  return tightened;
}
