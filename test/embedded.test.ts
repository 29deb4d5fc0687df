import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { acquireDataDirLock, EmbeddedDatabaseBusyError } from "../src/db/embedded-lock.js";
import { migrate } from "../src/db/migrate.js";
import { spawnOwned } from "./helpers/process.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function emptyDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "embedded-"));
  dirs.push(d);
  return d;
}

/**
 * One data folder created (PGlite's initdb) and migrated once for the file; each test gets a copy
 * of it. Creating a database on an empty folder takes seconds per test, and these tests are about
 * the lock and about reopening, not about the first start (first-start.test.ts starts the server
 * on an empty folder). The copy carries no lock file: closing the template removed it.
 */
let template: string;
beforeAll(async () => {
  template = emptyDir();
  const db = openDatabase({ kind: "embedded", dataDir: template, command: "test" });
  try {
    await migrate(db, createLogger("silent"));
  } finally {
    await db.close();
  }
}, 120_000);
function dataDir(): string {
  const d = emptyDir();
  cpSync(path.join(template, "pglite"), path.join(d, "pglite"), { recursive: true });
  return d;
}

describe("the embedded database's lock", () => {
  it("when a process holds the data folder, then a second opener is refused with a message naming the holder", async () => {
    const dir = dataDir();
    const first = openDatabase({ kind: "embedded", dataDir: dir, command: "server" });
    try {
      let error: unknown;
      try {
        openDatabase({ kind: "embedded", dataDir: dir, command: "cli user list" });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(EmbeddedDatabaseBusyError);
      expect((error as Error).message).toContain(`in use by process ${process.pid} (server)`);
      expect((error as Error).message).toContain("DATABASE_URL");
    } finally {
      await first.close();
    }
    const again = openDatabase({ kind: "embedded", dataDir: dir, command: "server" });
    await again.close();
  });

  // The takeovers are decided by the lock alone, before PGlite opens (test above: openDatabase takes
  // it): they take the lock itself, sparing a database start each.
  it("when the lock was left by a process that died, then it is taken over", async () => {
    const dir = emptyDir();
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.on("exit", resolve));
    writeFileSync(path.join(dir, "lock.json"), JSON.stringify({ pid: dead.pid, command: "server" }));
    expectTakenOver(dir);
  });

  it("when the lock names this very process but it does not hold it (a restarted PID 1), then it is taken over", () => {
    const dir = emptyDir();
    writeFileSync(path.join(dir, "lock.json"), JSON.stringify({ pid: process.pid, command: "server" }));
    expectTakenOver(dir);
  });

  it("when the lock's process id now belongs to another program (another start time), then it is taken over; the same one is refused", () => {
    const other = spawnOwned(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      const started = readFileSync(`/proc/${other.pid}/stat`, "utf8");
      const startTime = started.slice(started.lastIndexOf(")") + 2).split(" ")[19];
      const reused = emptyDir();
      writeFileSync(path.join(reused, "lock.json"), JSON.stringify({ pid: other.pid, started: "1", command: "server" }));
      expectTakenOver(reused);

      const live = emptyDir();
      writeFileSync(path.join(live, "lock.json"), JSON.stringify({ pid: other.pid, started: startTime, command: "server" }));
      expect(() => openDatabase({ kind: "embedded", dataDir: live, command: "cli" })).toThrow(EmbeddedDatabaseBusyError);
    } finally {
      other.kill();
    }
  });

  it("when data is written and the database reopened, then the data is still there", async () => {
    const dir = dataDir();
    const first = openDatabase({ kind: "embedded", dataDir: dir, command: "test" });
    await first.prisma.parkourMap.create({ data: { name: "Persisted" } });
    await first.close();
    const second = openDatabase({ kind: "embedded", dataDir: dir, command: "test" });
    try {
      expect((await second.prisma.parkourMap.findMany()).map((m) => m.name)).toEqual(["Persisted"]);
    } finally {
      await second.close();
    }
  });
});

/** Takes the lock of `dir` (or throws EmbeddedDatabaseBusyError), checks it now names this process, and releases it. */
function expectTakenOver(dir: string): void {
  const release = acquireDataDirLock(dir, "cli");
  try {
    expect(JSON.parse(readFileSync(path.join(dir, "lock.json"), "utf8"))).toMatchObject({ pid: process.pid, command: "cli" });
  } finally {
    release();
  }
  expect(existsSync(path.join(dir, "lock.json"))).toBe(false);
}
