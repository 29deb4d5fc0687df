// How long one player's export and erasure take, and what the requests meanwhile wait, as an operator meets it:
//   npx tsx bench/privacy.ts [--players 10000] [--logs 10000]
// On PostgreSQL (a scratch database of DATABASE_URL's server) and on the embedded database: a server in production
// settings (src/main.ts), a community of that many players imported by the CLI, one of whom has `logs` reward
// logs; then POST /api/admin/players/export of them, then POST /api/admin/players/erase. Meanwhile a read (GET
// /api/parkour/get-all-maps) and a write (create-reward-log for another player) are each sent every 100 ms:
// their longest answer time is what a request waits. Prints a Markdown table row per database.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { community } from "./community.js";
import { loadAverage } from "./proc.js";
import { dropRedisKeys, productionSettings, scratchDatabase, startService } from "./service.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { players: { type: "string", default: "10000" }, logs: { type: "string", default: "10000" } } });
const players = Number(values.players);
const logs = Number(values.logs);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function measure(label: string, databaseUrl: string, dir: string): Promise<string> {
  const dataDir = mkdtempSync(path.join(dir, "data-"));
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, DATABASE_READ_URL: "" };
  const cli = async (...args: string[]) =>
    (await run(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), ...args], { cwd: root, env, maxBuffer: 1 << 26 })).stdout;
  const data = community(players);
  const rewardLogs = Array.from({ length: logs }, (_, i) => ({
    id: i + 1,
    playerId: 1,
    rewardId: 1 + (i % 50),
    rewardedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace(".000", ""),
  }));
  const file = path.join(dir, `community-${label}.json`);
  writeFileSync(file, JSON.stringify({ ...data, rewardLogs }));
  const prefix = `bench-privacy-${label}-${process.pid}:`;
  const { child, url } = await startService(databaseUrl, { ...productionSettings(prefix), DATA_DIR: dataDir }, "ignore");
  try {
    const key = (await cli("user", "create", "user-B")).trim();
    await cli("import", file);
    const headers = { "X-API-Key": key, "Content-Type": "application/json" };
    const timed = async (work: () => Promise<Response>) => {
      const longest = { read: 0, write: 0 };
      let running = true;
      const probe = async (kind: "read" | "write") => {
        for (let i = 0; running; i++) {
          const sent = performance.now();
          const res =
            kind === "read"
              ? await fetch(`${url}/api/parkour/get-all-maps`, { headers })
              : await fetch(`${url}/api/website/create-reward-log`, {
                  method: "POST",
                  headers,
                  body: JSON.stringify({ playerId: 2 + (i % 100), rewardId: 1 }),
                });
          await res.arrayBuffer();
          if (res.status >= 300) throw new Error(`${kind}: ${res.status}`);
          longest[kind] = Math.max(longest[kind], performance.now() - sent);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const probes = [probe("read"), probe("write")];
      const started = performance.now();
      const res = await work();
      const bytes = (await res.arrayBuffer()).byteLength;
      const ms = performance.now() - started;
      running = false;
      await Promise.all(probes);
      if (res.status !== 200) throw new Error(`${res.status}`);
      return { ms, longest, bytes };
    };
    const post = (p: string) => () => fetch(`${url}/api${p}`, { method: "POST", headers, body: JSON.stringify({ id: 1 }) });
    const exported = await timed(post("/admin/players/export"));
    const erased = await timed(post("/admin/players/erase"));
    const waits = (l: { read: number; write: number }) => `${Math.round(l.read)} / ${Math.round(l.write)} ms`;
    return `| ${label} | ${seconds(exported.ms)} (${(exported.bytes / 1e6).toFixed(1)} MB) | ${waits(exported.longest)} | ${seconds(erased.ms)} | ${waits(erased.longest)} |`;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await dropRedisKeys(prefix);
  }
}

const dir = mkdtempSync(path.join(os.tmpdir(), "bench-privacy-"));
const scratch = scratchDatabase("bench_privacy");
try {
  await scratch.create();
  const rows = [await measure("PostgreSQL", scratch.url, dir), await measure("embedded", "", dir)];
  console.log(`${players.toLocaleString("en")} players; the one exported and erased has ${logs.toLocaleString("en")} reward logs.\n`);
  console.log("| database | export (answer) | longest read / write meanwhile | erase | longest read / write meanwhile |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\nload average after: ${loadAverage()}; ${os.cpus().length} cores, Node ${process.version}`);
} finally {
  await scratch.drop();
  rmSync(dir, { recursive: true, force: true });
}
