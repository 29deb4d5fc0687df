// How long requests wait on the embedded database while the CLI imports or backs up through the running
// server (its control channel), as an operator meets it:
//   npx tsx bench/embedded-waits.ts [--players 10000,20000]
// For each size: a new data folder, a server on it in production settings (src/main.ts, npm start's flags), a community of that many
// players (bench/community.ts) written to a file, `cli -- import` of it, then `cli -- backup`. Meanwhile a
// small read (GET /api/parkour/get-all-maps) is sent every 100 ms: its longest answer time is what a request
// waits. Prints one Markdown table row per size, and the machine's load.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { community } from "./community.js";
import { loadAverage } from "./proc.js";
import { dropRedisKeys, productionSettings, startService } from "./service.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { players: { type: "string", default: "10000,20000" } } });
const sizes = values.players.split(",").map(Number);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function measure(players: number, dir: string): Promise<string> {
  const dataDir = mkdtempSync(path.join(dir, "data-"));
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "" };
  const cli = async (...args: string[]) =>
    (await run(process.execPath, ["--import", "tsx", path.join(root, "src/cli/main.ts"), ...args], { cwd: root, env, maxBuffer: 1 << 24 })).stdout;
  const file = path.join(dir, `community-${players}.json`);
  writeFileSync(file, JSON.stringify(community(players)));
  // Production settings (request log at info, metrics, rate limits counted in Redis), as operators run it.
  const prefix = `bench-waits-${players}-${process.pid}:`;
  const { child, url } = await startService("", { ...productionSettings(prefix), DATA_DIR: dataDir }, "ignore");
  try {
    const key = (await cli("user", "create", "user-B")).trim();
    const timed = async (work: () => Promise<unknown>) => {
      let longest = 0;
      let running = true;
      const probing = (async () => {
        while (running) {
          const sent = performance.now();
          const res = await fetch(`${url}/api/parkour/get-all-maps`, { headers: { "X-API-Key": key } });
          await res.arrayBuffer();
          longest = Math.max(longest, performance.now() - sent);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const started = performance.now();
      await work();
      const ms = performance.now() - started;
      running = false;
      await probing;
      return { ms, longest };
    };
    const imported = await timed(() => cli("import", file));
    const backedUp = await timed(() => cli("backup", path.join(dir, `backup-${players}.backup`)));
    return `| ${players.toLocaleString("en")} | ${seconds(imported.ms)} | ${Math.round(imported.longest)} ms | ${seconds(backedUp.ms)} | ${Math.round(backedUp.longest)} ms |`;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await dropRedisKeys(prefix);
  }
}

const dir = mkdtempSync(path.join(os.tmpdir(), "bench-embedded-waits-"));
try {
  const rows: string[] = [];
  for (const players of sizes) rows.push(await measure(players, dir));
  console.log("| players | import (CLI, through the server) | longest read meanwhile | backup | longest read meanwhile |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\nload average after: ${loadAverage()}; ${os.cpus().length} cores, Node ${process.version}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
