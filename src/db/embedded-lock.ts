import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * PGlite is a single-process database: two processes opening the same data
 * folder corrupt it. Whoever opens it (the server, or the operator CLI) holds
 * this lock file; a second opener is refused with a message naming the
 * holder. A lock left by a process that died is taken over.
 */
export class EmbeddedDatabaseBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: { pid: number; command?: string },
  ) {
    super(
      `The embedded database in ${dataDir} is in use by process ${holder.pid}` +
        (holder.command ? ` (${holder.command})` : "") +
        ". PGlite allows one process at a time: stop that process first, or run the server and this command " +
        "against a PostgreSQL server by setting DATABASE_URL.",
    );
    this.name = "EmbeddedDatabaseBusyError";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function acquireDataDirLock(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, "lock.json");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, JSON.stringify({ pid: process.pid, command, since: new Date().toISOString() }));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(lockPath);
        } catch {
          // already gone: nothing to release
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder: { pid: number; command?: string } | undefined;
    try {
      holder = JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number; command?: string };
    } catch {
      holder = undefined; // unreadable: a writer died half-way
    }
    if (holder && Number.isInteger(holder.pid) && isAlive(holder.pid)) {
      throw new EmbeddedDatabaseBusyError(dataDir, holder);
    }
    try {
      unlinkSync(lockPath);
    } catch {
      // another process took it over first; the next attempt finds out
    }
  }
  throw new Error(`Could not lock the embedded database in ${dataDir}`);
}
