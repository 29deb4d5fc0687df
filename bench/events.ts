// The event stream (GET /api/events), measured: latency from a write's answer on one instance to its
// event on a stream of another, and what idle streams cost.
//   npx tsx bench/events.ts [--latency 300] [--idle 1000]   (--idle: 1,000 at most, one API user's cap)
// Creates a database on the PostgreSQL server of DATABASE_URL (default: the local one), starts two
// instances of the service (src/main.ts) sharing it, opens a stream (reward_log.created) on the second,
// then writes `--latency` reward logs through the first, one at a time, 20 ms apart: for each, the time
// its event arrived minus the time its 201 arrived. Then opens `--idle` more streams on the second
// instance and reports its RSS before and after (Linux /proc). Writes the section between its markers in
// bench/results.md. Load goes to 127.0.0.1 only.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { scratchDatabase, startService as startServiceOn } from "./service.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/logger.js";
import { ApiUsers } from "../src/users/users.js";

const { values } = parseArgs({
  options: {
    latency: { type: "string", default: "300" },
    idle: { type: "string", default: "1000" },
    out: { type: "string", default: "bench/results.md" },
  },
});
const root = path.resolve(import.meta.dirname, "..");
const scratch = scratchDatabase("bench_events");
const dbUrl = scratch.url;

const startService = () => startServiceOn(dbUrl, { EVENTS_STREAMS_PER_USER: "1000" });

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number) => (n < 10 ? n.toFixed(1) : String(Math.round(n)));

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/** Opens a stream and calls `onEvent` with each event's data and its arrival time; resolves once the head came. */
function openStream(url: string, key: string, agent: http.Agent, onEvent?: (data: string, at: number) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events?types=reward_log.created`, { headers: { "X-API-Key": key }, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data !== undefined) onEvent?.(data, at);
        }
      });
      resolve(req);
    });
    req.on("error", reject);
  });
}

async function main(): Promise<void> {
  await scratch.create();
  const services: ChildProcess[] = [];
  const streams: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const db = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 2 });
  try {
    await migrate(db, createLogger("silent"));
    const { apiKey } = await new ApiUsers(db.prisma).create("user-B");
    // The idle streams' user: EVENTS_STREAMS_PER_USER is 1,000 at most.
    const { apiKey: idleKey } = await new ApiUsers(db.prisma).create("user-A");
    const player = await db.prisma.player.create({
      data: { pseudo: "bench", token: "t", ip: "203.0.113.1", firstConnection: new Date(), totalTimeConnection: 0 },
    });
    const a = await startService();
    const b = await startService();
    services.push(a.child, b.child);
    const received = new Map<number, number>();
    streams.push(await openStream(b.url, apiKey, agent, (data, at) => {
      const rewardId = (JSON.parse(data) as { data: { rewardId: number } }).data.rewardId;
      if (!received.has(rewardId)) received.set(rewardId, at);
    }));
    let next = 1;
    const write = async () => {
      const rewardId = next++;
      const res = await fetch(`${a.url}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ playerId: player.id, rewardId }),
      });
      if (res.status !== 201) throw new Error(`write answered ${res.status}: ${await res.text()}`);
      return { rewardId, answered: performance.now() };
    };
    const until = async (test: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!test()) {
        if (Date.now() > end) throw new Error(`events did not all arrive in time (${received.size} received)`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    // Warm-up: connections, JIT.
    const warm: { rewardId: number }[] = [];
    for (let i = 0; i < 50; i++) warm.push(await write());
    await until(() => warm.every((w) => received.has(w.rewardId)), 30_000);

    const samples: { rewardId: number; answered: number }[] = [];
    for (let i = 0; i < Number(values.latency); i++) {
      samples.push(await write());
      await new Promise((r) => setTimeout(r, 20));
    }
    await until(() => samples.every((s) => received.has(s.rewardId)), 60_000);
    const latency = samples.map((s) => received.get(s.rewardId)! - s.answered).sort((x, y) => x - y);

    // Idle streams on the second instance (each its own connection).
    const idle = Number(values.idle);
    const before = rssMb(b.child.pid!);
    for (let i = 0; i < idle; i += 50) {
      streams.push(...(await Promise.all(Array.from({ length: Math.min(50, idle - i) }, () => openStream(b.url, idleKey, agent)))));
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const after = rssMb(b.child.pid!);

    const load = os.loadavg().map((l) => l.toFixed(2)).join(", ");
    const section = [
      "<!-- bench/events.ts: start -->",
      "## Event stream",
      "",
      `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/events.ts --latency ${values.latency} --idle ${idle}\`): ` +
        `two instances of the service on one PostgreSQL, writes through the first, the stream on the second, all on this shared, loaded machine ` +
        `(2 cores for several sessions; numbers from a quiet host will be lower); Node ${process.version}; load average ${load} at the end.`,
      "",
      "| measure | p50 ms | p99 ms | max ms |",
      "|---|---|---|---|",
      `| one write at a time: its event on the other instance − the write's 201 | ${round(percentile(latency, 50))} | ${round(percentile(latency, 99))} | ${round(latency.at(-1)!)} |`,
      "",
      `${idle} idle streams more on the second instance: RSS ${Math.round(before)} MB → ${Math.round(after)} MB (+${Math.round(after - before)} MB).`,
      "<!-- bench/events.ts: end -->",
    ].join("\n");
    console.log(section);
    const out = path.join(root, values.out);
    const current = existsSync(out) ? readFileSync(out, "utf8") : "";
    const marked = /<!-- bench\/events\.ts: start -->[\s\S]*<!-- bench\/events\.ts: end -->/;
    writeFileSync(out, marked.test(current) ? current.replace(marked, section) : `${current.trimEnd()}\n\n${section}\n`);
  } finally {
    for (const s of streams) s.destroy();
    for (const child of services) child.kill("SIGTERM");
    await Promise.all(services.map((child) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)))));
    await db.close();
    await scratch.drop();
  }
}

await main();
