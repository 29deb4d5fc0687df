import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { OperatorError } from "../core/operator-error.js";

/**
 * PGlite is a single-process database: whoever opens the folder (the server or the CLI) holds this lock
 * file, and a second opener is refused, the holder named. A lock whose process is gone is taken over;
 * "gone" compares the process id and, where /proc exists, its start time (in a container the server is
 * always PID 1, so a restarted one finds its own id in the stale lock).
 */
export class EmbeddedDatabaseBusyError extends OperatorError {
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

interface LockHolder {
  pid: number;
  /** Start time of the process in clock ticks since boot (Linux), when known. */
  started?: string;
  command?: string;
}

/** Lock files this process holds right now. */
const heldHere = new Set<string>();

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function isHeld(lockPath: string, holder: LockHolder): boolean {
  if (holder.pid === process.pid) return heldHere.has(lockPath);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const started = startTimeOf(holder.pid);
  return holder.started === undefined || started === undefined || started === holder.started;
}

export function acquireDataDirLock(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, "lock.json");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      const me: LockHolder = { pid: process.pid, started: startTimeOf(process.pid), command };
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      heldHere.add(lockPath);
      return () => {
        heldHere.delete(lockPath);
        try {
          unlinkSync(lockPath);
        } catch {
          // already gone: nothing to release
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder: LockHolder | undefined;
    try {
      holder = JSON.parse(readFileSync(lockPath, "utf8")) as LockHolder;
    } catch {
      holder = undefined; // unreadable: a writer died half-way
    }
    if (holder && Number.isInteger(holder.pid) && isHeld(lockPath, holder)) {
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
