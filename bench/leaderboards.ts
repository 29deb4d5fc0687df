// What the leaderboards cost with many players, beside get-all-infectes, as operators run the service:
//   npx tsx bench/leaderboards.ts [--players 1000000] [--active 100000] [--seconds 10] [--connections 8]
// A scratch database of DATABASE_URL's server, migrated by a server in production settings (src/main.ts);
// `players` players with statistics written in SQL (kills 0–5,000, a tenth of them 0), `active` of them with
// gains this week (counted by the trigger, as writes count them). Then each route is driven for `seconds` by
// `connections` clients in a closed loop, a random player each time: p50, p99, req/s, and the CPU per request
// of the server and of its PostgreSQL backends. get-all-infectes (the whole table, what a board cost before)
// is asked a few times alone. Prints a Markdown table.
import { execFileSync } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { backendCpu, backendCpuSpent, cpuMicros, loadAverage } from "./proc.js";
import { dropRedisKeys, productionSettings, scratchDatabase, startService } from "./service.js";
import { percentile, round } from "./stats.js";

const { values } = parseArgs({
  options: {
    players: { type: "string", default: "1000000" },
    active: { type: "string", default: "100000" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "8" },
  },
});
const players = Number(values.players);
const active = Number(values.active);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const APP = `bench-leaderboards-${process.pid}`;

async function sql(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

async function seed(url: string): Promise<void> {
  // The totals from before the week: written with the triggers off (a superuser's replica role), so that they
  // count as no one's gains; the versions are moved by the week's update below.
  await sql(
    url,
    `SET session_replication_role = replica;
    INSERT INTO players (pseudo, token, ip) SELECT 'player' || g, 't', '' FROM generate_series(1, ${players}) g;
    INSERT INTO infected_stats ("playerId", kill, death, coin, playtime)
    SELECT id, CASE WHEN id % 10 = 0 THEN 0 ELSE (random() * 5000)::int END, (random() * 3000)::int, (random() * 100000)::int, (random() * 1e6)::int FROM players`,
  );
  // This week's gains: the trigger counts them into the week (and the day, the month) as a write would.
  await sql(url, `UPDATE infected_stats SET kill = kill + 1 + (random() * 40)::int WHERE "playerId" <= ${active}`);
  await sql(url, "VACUUM ANALYZE");
}

interface Figures {
  route: string;
  requests: number;
  p50: number;
  p99: number;
  perSecond: number;
  serverCpuMs: number;
  dbCpuMs: number;
}

async function drive(
  route: string,
  url: string,
  pid: number,
  dbUrl: string,
  key: string,
  path: () => string,
  forSeconds = seconds,
  clients = connections,
): Promise<Figures> {
  const times: number[] = [];
  const cpuBefore = cpuMicros(pid);
  const dbBefore = await backendCpu(dbUrl, APP);
  const started = performance.now();
  const until = started + forSeconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        const res = await fetch(`${url}/api${path()}`, { headers: { "X-API-Key": key } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${route}: ${res.status}`);
        times.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = (cpuMicros(pid) - cpuBefore) / 1000;
  const dbCpu = backendCpuSpent(dbBefore, await backendCpu(dbUrl, APP)) / 1000;
  times.sort((a, b) => a - b);
  return {
    route,
    requests: times.length,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    perSecond: times.length / elapsed,
    serverCpuMs: serverCpu / times.length,
    dbCpuMs: dbCpu / times.length,
  };
}

const scratch = scratchDatabase("bench_leaderboards");
const prefix = `bench-leaderboards-${process.pid}:`;
await scratch.create();
try {
  const named = `${scratch.url}?application_name=${encodeURIComponent(APP)}`;
  // The start migrates and makes this week's periods; the statistics go in after, their gains counted into them.
  const { child, url } = await startService(named, productionSettings(prefix), "ignore");
  const seeded = performance.now();
  await seed(scratch.url);
  const seedSeconds = (performance.now() - seeded) / 1000;
  try {
    const key = execFileSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "user", "create", "user-D"], {
      env: { ...process.env, DATABASE_URL: scratch.url },
      encoding: "utf8",
    }).trim();
    const pid = child.pid!;
    const random = (n: number) => 1 + Math.floor(Math.random() * n);
    const results = [
      await drive("get-leaderboard, all-time, top 10", url, pid, scratch.url, key, () => "/infecte2/get-leaderboard?stat=kill"),
      await drive("get-leaderboard, this week, top 10", url, pid, scratch.url, key, () => "/infecte2/get-leaderboard?stat=kill&period=week"),
      await drive(
        "get-leaderboard-rank, all-time, any player",
        url,
        pid,
        scratch.url,
        key,
        () => `/infecte2/get-leaderboard-rank?stat=kill&playerId=${random(players)}`,
      ),
      await drive(
        "get-leaderboard-rank, this week, an active player",
        url,
        pid,
        scratch.url,
        key,
        () => `/infecte2/get-leaderboard-rank?stat=kill&period=week&playerId=${random(active)}`,
      ),
      await drive(
        "get-leaderboard-around, all-time, k=5",
        url,
        pid,
        scratch.url,
        key,
        () => `/infecte2/get-leaderboard-around?stat=kill&playerId=${random(players)}`,
      ),
      await drive("get-all-infectes (every player)", url, pid, scratch.url, key, () => "/infecte2/get-all-infectes", Math.max(seconds, 10), 1),
    ];
    console.log(
      `${players.toLocaleString("en")} players with statistics, ${active.toLocaleString("en")} with gains this week (seeded in ${seedSeconds.toFixed(0)} s); ${connections} clients, ${seconds} s a route; production settings.\n`,
    );
    console.log("| route | requests | p50 | p99 | req/s | server CPU / req | PostgreSQL CPU / req |");
    console.log("|---|---|---|---|---|---|---|");
    for (const r of results) {
      console.log(
        `| ${r.route} | ${r.requests} | ${round(r.p50)} ms | ${round(r.p99)} ms | ${round(r.perSecond)} | ${round(r.serverCpuMs)} ms | ${round(r.dbCpuMs)} ms |`,
      );
    }
    console.log(`\nload average after: ${loadAverage()}; ${os.cpus().length} cores, Node ${process.version}`);
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
} finally {
  await dropRedisKeys(prefix);
  await scratch.drop();
}
