import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/database.js";
import { spawnOwned } from "./helpers/process.js";
import { EmbeddedDatabaseBusyError } from "../src/db/embedded-lock.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "embedded-"));
  dirs.push(d);
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

  it("when the lock was left by a process that died, then it is taken over", async () => {
    const dir = dataDir();
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.on("exit", resolve));
    writeFileSync(path.join(dir, "lock.json"), JSON.stringify({ pid: dead.pid, command: "server" }));
    const db = openDatabase({ kind: "embedded", dataDir: dir, command: "server" });
    await db.close();
  });

  it("when the lock names this very process but it does not hold it (a restarted PID 1), then it is taken over", async () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "lock.json"), JSON.stringify({ pid: process.pid, command: "server" }));
    const db = openDatabase({ kind: "embedded", dataDir: dir, command: "server" });
    await db.close();
  });

  it("when the lock's process id now belongs to another program (another start time), then it is taken over; the same one is refused", async () => {
    const other = spawnOwned(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      const started = readFileSync(`/proc/${other.pid}/stat`, "utf8");
      const startTime = started.slice(started.lastIndexOf(")") + 2).split(" ")[19];
      const reused = dataDir();
      writeFileSync(path.join(reused, "lock.json"), JSON.stringify({ pid: other.pid, started: "1", command: "server" }));
      await openDatabase({ kind: "embedded", dataDir: reused, command: "server" }).close();

      const live = dataDir();
      writeFileSync(path.join(live, "lock.json"), JSON.stringify({ pid: other.pid, started: startTime, command: "server" }));
      expect(() => openDatabase({ kind: "embedded", dataDir: live, command: "cli" })).toThrow(EmbeddedDatabaseBusyError);
    } finally {
      other.kill();
    }
  });

  it("when data is written and the database reopened, then the data is still there", async () => {
    const dir = dataDir();
    const { migrate } = await import("../src/db/migrate.js");
    const { createLogger } = await import("../src/logger.js");
    const first = openDatabase({ kind: "embedded", dataDir: dir, command: "test" });
    await migrate(first, createLogger("silent"));
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
