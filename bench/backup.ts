// Backup and restore of a community of `--players` players (default 100,000), measured:
//   npx tsx bench/backup.ts [--players 100000]
// On the embedded database (a PGlite data folder in the system's temp folder) and on the PostgreSQL
// server of DATABASE_URL (default: the local one, a scratch database): the players (with their
// infected stats) are inserted, then `backup` (writeBackup, as the CLI runs it) to a file, `restore
// --check`, and `restore` into a new database. While the backup runs, a query like a request's
// (SELECT 1 on the service's client) is sent every 100 ms: its longest wait is what the API waits.
// Prints one Markdown table row per database; the machine's load average is printed beside it.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { writeBackup } from "../src/backup/backup.js";
import { checkBackup, checkTarget, restoreBackup } from "../src/backup/restore.js";
import { schemaVersion } from "../src/backup/tables.js";
import { localFiles } from "../src/cli/transfer-command.js";
import { createLogger } from "../src/core/logger.js";
import { type Database, openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { scratchDatabase } from "./service.js";

const { values } = parseArgs({ options: { players: { type: "string", default: "100000" } } });
const players = Number(values.players);
const quiet = createLogger("silent");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function fill(db: Database): Promise<void> {
  await migrate(db, quiet);
  await db.prisma.$executeRawUnsafe(`
    INSERT INTO players (pseudo, token, ip, "gradeId", credit, nickname, "chatId")
    SELECT 'player' || g, md5(g::text), '198.51.' || (g % 256) || '.' || (g / 256 % 256), g % 5, g % 1000, 'nick' || g, 'chat-' || g
      FROM generate_series(1, ${players}) AS g`);
  await db.prisma.$executeRawUnsafe(`INSERT INTO infected_stats ("playerId", kill, death, game) SELECT id, id % 50, id % 40, id % 90 FROM players`);
}

/** The backup, with the longest wait of a SELECT 1 sent every 100 ms meanwhile. */
async function timedBackup(db: Database, file: string): Promise<{ ms: number; longestWaitMs: number }> {
  let longestWaitMs = 0;
  let running = true;
  const probing = (async () => {
    while (running) {
      const sent = performance.now();
      await db.prisma.$queryRawUnsafe("SELECT 1");
      longestWaitMs = Math.max(longestWaitMs, performance.now() - sent);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const started = performance.now();
  await writeBackup(db, (pieces) => localFiles.write(file, pieces), { kept: { idempotencyRetainHours: 24 } });
  const ms = performance.now() - started;
  running = false;
  await probing;
  return { ms, longestWaitMs };
}

async function measure(name: string, open: () => Promise<{ db: Database; done(): Promise<void> }>, dir: string): Promise<string> {
  const file = path.join(dir, `${name}.backup`);
  const source = await open();
  let backup: { ms: number; longestWaitMs: number };
  try {
    await fill(source.db);
    backup = await timedBackup(source.db, file);
  } finally {
    await source.done();
  }
  const target = await open();
  let checkMs: number;
  let restoreMs: number;
  try {
    await migrate(target.db, quiet);
    // As `restore --check` runs: against the database it would restore into (its columns and constraints).
    let started = performance.now();
    await checkBackup(localFiles.read(file), undefined, {}, checkTarget(target.db.prisma, await schemaVersion(target.db.prisma)));
    checkMs = performance.now() - started;
    started = performance.now();
    await restoreBackup(target.db, () => localFiles.read(file), undefined);
    restoreMs = performance.now() - started;
  } finally {
    await target.done();
  }
  const mib = (statSync(file).size / 1024 / 1024).toFixed(1);
  return `| ${name} | ${players.toLocaleString("en")} | ${mib} MiB | ${seconds(backup.ms)} | ${Math.round(backup.longestWaitMs)} ms | ${seconds(checkMs)} | ${seconds(restoreMs)} |`;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "bench-backup-"));
try {
  const rows = [
    await measure(
      "embedded",
      () => {
        const dataDir = mkdtempSync(path.join(dir, "data-"));
        const db = openDatabase({ kind: "embedded", dataDir, command: "bench" });
        return Promise.resolve({ db, done: () => db.close() });
      },
      dir,
    ),
    await measure(
      "PostgreSQL",
      async () => {
        const scratch = scratchDatabase("bench_backup");
        await scratch.create();
        const db = openDatabase({ kind: "postgres", url: scratch.url, poolMax: 4 });
        return { db, done: async () => (await db.close(), await scratch.drop()) };
      },
      dir,
    ),
  ];
  console.log("| database | players | file | backup | longest wait of a query meanwhile | restore --check | restore |");
  console.log("|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(
    `\nload average before/after: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")}; ${os.cpus().length} cores, Node ${process.version}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
