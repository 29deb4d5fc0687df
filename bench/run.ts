/**
 * npm run bench [-- --players 10000 --rounds 3 --duration 8 --warmup 5 --runtimes 24,20 --production --only nick,reward --lists --out bench/results.md
 *                  --load wrk|autocannon --servers service-production,express]
 *
 * Creates a database on the PostgreSQL server of DATABASE_URL (default: the
 * local one) and loads a synthetic community through the operators' import
 * path. Then, on that data, for each Node runtime (--runtimes, default 24 and
 * 20 when available; Node 24 comes from the npm registry through
 * scripts/node-runtime.mjs), it starts the service (dist/main.js, as `npm
 * start` runs it) and three reference servers doing the same SQL with nothing
 * else (bench/baseline: plain node:http, Express 5, Fastify 5), checks that
 * all answer byte-identical JSON, and drives the same routes on each with
 * autocannon over several rounds, alternating the order. With --production
 * the service also runs with production settings (request logging at info,
 * metrics served, rate limits on in Redis) beside its lean ones (log level
 * warn, no metrics listener, limits off), and the lean service with its rate
 * limits on in Redis (what the limits cost). --lists then measures the large
 * lists on the lean service (bench/lists.ts): 4 whole lists at once (first
 * byte, RSS), a paged walk, a sync of 1 % changed rows against the whole list.
 *
 * Per route and server: req/s, p50/p99 and the CPU time of the server's own
 * process per request (utime + stime from /proc/PID/stat around each load
 * run: steadier than req/s on a shared machine), medians of the rounds, each
 * also as a ratio to the plain node:http server on the same runtime. Printed,
 * and written to its own section of --out. Load goes to 127.0.0.1 only.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import pg from "pg";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/core/logger.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";
import { measureLists, type ListServer } from "./lists.js";
import { availableTool, drive } from "./load.js";
import { BENCH_REDIS_URL, dropRedisKeys, productionSettings, startFlags } from "./service.js";

const { values: args } = parseArgs({
  options: {
    players: { type: "string", default: "10000" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "5" },
    only: { type: "string" },
    runtimes: { type: "string" },
    production: { type: "boolean", default: false },
    lists: { type: "boolean", default: false },
    out: { type: "string", default: "bench/results.md" },
    load: { type: "string" },
    servers: { type: "string" },
  },
});
const PLAYERS = Number(args.players);
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
/**
 * Seconds of load per route and server before any is counted, each round. A
 * server just started runs unoptimized code until V8 has compiled its hot
 * functions (on its own threads, counted in its CPU): the service, with more
 * code on a request's way, took 10–20 s of load to settle where Express took
 * 5, and one second of warm-up measured that start rather than what a server
 * that has run for a while costs.
 */
const WARMUP = Number(args.warmup);
const SERVER_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const LOAD = availableTool(args.load);
const SERVICE_NODE_OPTIONS = startFlags().join(" ");
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
// The section of --out this script owns: a run replaces it and leaves the rest of the file alone.
const SECTION_START = "<!-- npm run bench: start of the generated section -->";
const SECTION_END = "<!-- npm run bench: end of the generated section -->";

/** The servers compared, in the order of the tables. */
const KINDS = {
  // What operators run first (with --production), then what each part of it costs.
  "service-production": { label: "service, production settings", script: "dist/main.js" },
  "service-production-unlogged": { label: "service, production settings but no request log", script: "dist/main.js" },
  "service-limits": { label: "service, lean + rate limits in Redis", script: "dist/main.js" },
  service: { label: "service, lean", script: "dist/main.js" },
  express: { label: "Express 5 + pg", script: "bench/baseline/express.mjs" },
  fastify: { label: "Fastify 5 + pg", script: "bench/baseline/fastify.mjs" },
  plain: { label: "node:http + pg", script: "bench/baseline/server.mjs" },
} as const;
type Kind = keyof typeof KINDS;
const isService = (kind: Kind) => kind.startsWith("service");

interface Runtime {
  major: string;
  node: string;
  version: string;
}
interface Target {
  id: string;
  kind: Kind;
  runtime: Runtime;
}

/** The Node binaries asked for; by default 24 and 20, each only when it can be found or installed. */
function runtimes(): Runtime[] {
  const explicit = args.runtimes !== undefined;
  const found: Runtime[] = [];
  for (const major of (args.runtimes ?? "24,20").split(",").map((m) => m.trim())) {
    try {
      const node = execFileSync(process.execPath, ["scripts/node-runtime.mjs", major], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
      found.push({ major, node, version: execFileSync(node, ["--version"], { encoding: "utf8" }).trim() });
    } catch (error) {
      if (explicit) throw error;
      console.warn(`Node ${major} is not available here: the bench runs without it`);
    }
  }
  if (!found.length) throw new Error("no Node runtime to run the servers on");
  return found;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: SERVER_URL });
  await c.connect();
  await c.query(sql);
  await c.end();
}

function start(name: string, node: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(node, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  child.on("exit", (code) => {
    if (code && code !== 0) console.error(`${name} exited with ${code}:\n${err}`);
  });
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(killer);
}

async function waitReady(url: string, key: string, child: ChildProcess) {
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`${url} exited before it was ready`);
    try {
      const res = await fetch(`${url}/api/parkour/get-all-maps`, { headers: { "X-API-Key": key } });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready`);
}

function rssMb(pid: number, field: "VmHWM" | "VmRSS" = "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
}

/** CPU time of the process so far, user + system, in µs (fields 14 and 15 of /proc/PID/stat, after the command name). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

/**
 * The CPU so far of each PostgreSQL backend serving one server (its pool's
 * connections carry the server's id as application_name), by pid: PostgreSQL
 * runs on the same cores, so what a server makes it do is part of its cost.
 */
async function backendCpu(appName: string): Promise<Map<number, number>> {
  const c = new pg.Client({ connectionString: SERVER_URL });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [appName]);
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuMicros(pid));
      } catch {
        // ended meanwhile
      }
    }
    return cpu;
  } finally {
    await c.end();
  }
}

/** What the backends spent between two readings; one opened meanwhile counts from its start. */
const backendCpuSpent = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, cpu]) => sum + cpu - (before.get(pid) ?? 0), 0);

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(", ");

interface Scenario {
  name: string;
  kind: "point" | "list" | "write" | "conditional";
  connections: number;
  request: () => autocannon.Request[];
  /** For wrk, a Lua `request` function instead of requests written out (see load.ts). */
  wrkRequest?: () => string;
  headers?: (url: string) => Promise<Record<string, string>>;
  expect: number;
}

type Sample = { rps: number; p50: number; p99: number; cpu: number; dbCpu: number; bad: number };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Requests a second as printed: whole above 10, two decimals below (whole lists of a large community). */
const perSecond = (rps: number) => rps.toFixed(rps < 10 ? 2 : 0);

async function main() {
  const found = runtimes();
  const kinds: Kind[] = (Object.keys(KINDS) as Kind[])
    .filter((k) => args.production || !["service-production", "service-production-unlogged", "service-limits"].includes(k))
    // --servers service,service-limits: those alone (a quicker A/B), with the two the ratios are taken against.
    .filter((k) => !args.servers || k === "plain" || k === "express" || args.servers.split(",").includes(k));
  const targets: Target[] = found.flatMap((runtime) => kinds.map((kind) => ({ id: `${kind}@${runtime.major}`, kind, runtime })));
  const suffix = randomBytes(4).toString("hex");
  const redisPrefix = `bench_${suffix}:`;
  if (args.production) {
    const redis = new Redis(BENCH_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await redis.connect().then(() => redis.ping()).catch(() => {
      throw new Error(`--production needs Redis at ${BENCH_REDIS_URL} (BENCH_REDIS_URL)`);
    });
    redis.disconnect();
  }

  const dbName = `bench_${suffix}`;
  const url = new URL(SERVER_URL);
  url.pathname = `/${dbName}`;
  const dbUrl = url.toString();
  await admin(`CREATE DATABASE "${dbName}"`);
  const running = new Map<string, ChildProcess>();
  const loadAtStart = loadAverage();
  try {
    console.log(`database ${dbName}: loading ${PLAYERS} players through the import path…`);
    const db = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 4 });
    await migrate(db, createLogger("silent"));
    const data = community(PLAYERS);
    const t0 = Date.now();
    // One import holds its arrays as one jsonb value (at most 256 MB): a large community goes in slices, players first.
    const SLICE = 200_000;
    for (const [name, rows] of Object.entries(data) as [keyof typeof data, unknown[]][]) {
      for (let i = 0; i < rows.length; i += SLICE) await importData(db.prisma, { [name]: rows.slice(i, i + SLICE) });
    }
    const loadSeconds = (Date.now() - t0) / 1000;
    const key = (await new ApiUsers(db.prisma).create("user-A")).apiKey;
    await db.close();
    console.log(`loaded in ${loadSeconds.toFixed(1)} s`);

    // Set here whatever the environment or a .env file says: one process, no replica, Redis only where asked.
    const common = { DATABASE_URL: dbUrl, DATABASE_READ_URL: "", REDIS_URL: "", WEB_CONCURRENCY: "1", HOST: "127.0.0.1", NODE_ENV: "production" };
    const envOf = (kind: Kind): NodeJS.ProcessEnv => {
      // The service runs as `npm start` runs it: with its memory flags.
      const service = { ...common, NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS };
      // One key sends thousands of requests a second: lean settings measure the routes alone.
      const lean = { LOG_LEVEL: "warn", METRICS_PORT: "off" };
      if (kind === "service") return { ...service, ...lean, RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0" };
      // The lean service with both limits counted in Redis, never reached: what the limits cost.
      if (kind === "service-limits") {
        return { ...service, ...productionSettings(redisPrefix), ...lean };
      }
      // Production: every request logged, metrics served, limits counted in Redis, high enough never to refuse.
      // The same without the request log line (LOG_LEVEL warn): what that line costs.
      if (kind === "service-production" || kind === "service-production-unlogged") {
        return { ...service, ...productionSettings(redisPrefix), ...(kind === "service-production" ? {} : { LOG_LEVEL: "warn" }) };
      }
      // The reference servers build a whole list in memory, as naive servers do: room for four at 1,000,000 players.
      return { ...common, NODE_OPTIONS: "--max-old-space-size=16384" };
    };

    const nicks = Array.from({ length: 200 }, (_, i) => (i % 2 ? `player${(i * 37) % PLAYERS}` : `NICK${(i * 53) % PLAYERS}`));
    const cosmeticIds = data.cosmetics.map((c) => c.id);
    const worldIds = data.worlds.map((w) => w.id);
    // Every request built takes the next number: reward ids never repeat, whichever server gets them.
    let counter = 0;
    let wrkRuns = 0;
    const pick = <T,>(xs: T[]) => xs[counter++ % xs.length]!;
    const get = (path: string, query?: () => string): autocannon.Request[] => [
      { method: "GET", path, setupRequest: (req) => ({ ...req, path: query ? `${path}?${query()}` : path }) },
    ];
    const json = (req: autocannon.Request, body: unknown) => ({ ...req, headers: { ...req.headers, "content-type": "application/json" }, body: JSON.stringify(body) });

    const scenarios: Scenario[] = [
      { name: "get-player-by-nick", kind: "point", connections: 32, expect: 200, request: () => get("/api/player/get-player-by-nick", () => `nick=${pick(nicks)}`) },
      { name: "get-cosmetic", kind: "point", connections: 32, expect: 200, request: () => get("/api/cosmetic/get-cosmetic", () => `id=${pick(cosmeticIds)}`) },
      { name: "get-all-players", kind: "list", connections: 4, expect: 200, request: () => get("/api/player/get-all-players") },
      { name: "get-all-full-players-by-gradeId", kind: "list", connections: 8, expect: 200, request: () => get("/api/player/get-all-full-players-by-gradeId", () => `gradeId=${counter++ % 10}`) },
      { name: "get-all-infectes", kind: "list", connections: 4, expect: 200, request: () => get("/api/infecte2/get-all-infectes") },
      { name: "get-active-items", kind: "list", connections: 32, expect: 200, request: () => get("/api/temporary-item/get-active-items") },
      { name: "get-all-maps", kind: "list", connections: 32, expect: 200, request: () => get("/api/parkour/get-all-maps") },
      {
        name: "create-reward-log", kind: "write", connections: 16, expect: 201,
        request: () => [{
          method: "POST", path: "/api/website/create-reward-log",
          setupRequest: (req) => json(req, { playerId: 1 + (counter % PLAYERS), rewardId: 1_000_000 + counter++ }),
        }],
        // Reward ids never repeat: each run of wrk takes ten million of its own.
        wrkRequest: () => {
          const base = 100_000_000 + 10_000_000 * wrkRuns++;
          return [
            'headers["content-type"] = "application/json"',
            "request = function()",
            "  n = n + 1",
            `  return wrk.format("POST", "/api/website/create-reward-log", headers, string.format('{"playerId":%d,"rewardId":%d}', 1 + n % ${PLAYERS}, ${base} + n))`,
            "end",
          ].join("\n");
        },
      },
      {
        name: "update-world", kind: "write", connections: 16, expect: 200,
        request: () => [{
          method: "PATCH", path: "/api/freebuild/update-world",
          setupRequest: (req) => json(req, { id: pick(worldIds), gamerulePvp: counter % 2 === 0, tag: `t${counter++ % 100}` }),
        }],
      },
    ];
    for (const path of ["/api/player/get-all-players", "/api/infecte2/get-all-infectes", "/api/parkour/get-all-maps", "/api/temporary-item/get-active-items"]) {
      scenarios.push({
        name: `${path.split("/").pop()} (If-None-Match)`, kind: "conditional", connections: 32, expect: 304,
        request: () => get(path),
        headers: async (target): Promise<Record<string, string>> => {
          const etag = (await fetch(`${target}${path}`, { headers: { "X-API-Key": key } })).headers.get("etag");
          return etag ? { "If-None-Match": etag } : {};
        },
      });
    }
    const wanted = args.only?.split(",").map((s) => s.trim()).filter(Boolean);
    // A part that is a route's whole name selects that route alone ("get-all-players" without its If-None-Match variant).
    const selected = scenarios.filter((s) => !wanted || wanted.some((w) => s.name === w || (!scenarios.some((o) => o.name === w) && s.name.includes(w))));
    if (!selected.length) throw new Error(`--only ${args.only} matches no route`);

    const samples = new Map<string, Sample[]>();
    const peakRss = new Map<string, number>();
    const samePaths = [
      "/api/player/get-all-players", "/api/player/get-all-full-players-by-gradeId?gradeId=3", "/api/player/get-player-by-nick?nick=NICK12",
      "/api/cosmetic/get-cosmetic?id=5", "/api/infecte2/get-all-infectes", "/api/temporary-item/get-active-items", "/api/parkour/get-all-maps",
    ];

    /** Starts one runtime's servers, checks their answers, warms them up (unless told not to). */
    const startGroup = async (group: Target[], warm = true) => {
      const urls = new Map<string, string>();
      for (const t of group) {
        const port = await freePort();
        // Its connections named after it, so that its PostgreSQL backends' CPU can be told apart.
        const env = envOf(t.kind);
        const named = `${env.DATABASE_URL}?application_name=${encodeURIComponent(t.id)}`;
        const child = start(t.id, t.runtime.node, KINDS[t.kind].script, { ...env, DATABASE_URL: named, PORT: String(port) });
        running.set(t.id, child);
        urls.set(t.id, `http://127.0.0.1:${port}`);
      }
      for (const t of group) await waitReady(urls.get(t.id)!, key, running.get(t.id)!);
      // Same answers, byte for byte, before any load; the lean service is the reference.
      for (const path of samePaths) {
        const bodies = await Promise.all(group.map(async (t) => (await fetch(`${urls.get(t.id)}${path}`, { headers: { "X-API-Key": key } })).text()));
        bodies.forEach((body, i) => {
          if (body !== bodies[0]) throw new Error(`${group[i]!.id} and ${group[0]!.id} differ on ${path}:\n${body.slice(0, 300)}\n${bodies[0]!.slice(0, 300)}`);
        });
      }
      // JIT, connection pools and PostgreSQL's caches, before anything is counted.
      for (const s of warm ? selected : []) {
        for (const t of group) {
          const headers = { "X-API-Key": key, ...(s.headers && isService(t.kind) ? await s.headers(urls.get(t.id)!) : {}) };
          await autocannon({ url: urls.get(t.id)!, connections: s.connections, duration: WARMUP, headers, requests: s.request() });
        }
      }
      return urls;
    };

    const stopGroup = async (group: Target[]) => {
      for (const t of group) {
        const child = running.get(t.id);
        if (!child) continue;
        if (child.exitCode === null) peakRss.set(t.id, Math.max(peakRss.get(t.id) ?? 0, rssMb(child.pid!)));
        await stop(child);
        running.delete(t.id);
      }
    };

    // One runtime's servers at a time (each holds a pool of PostgreSQL connections), alternating which runtime goes first.
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? found : [...found].reverse();
      for (const runtime of order) {
        const group = targets.filter((t) => t.runtime === runtime);
        const urls = await startGroup(group);
        console.log(`round ${round}, Node ${runtime.version}: servers up, answers identical, warmed up (load average ${loadAverage()})`);
        for (const s of selected) {
          for (const t of round % 2 ? group : [...group].reverse()) {
            // The reference servers have no conditional GETs: their row is their full answer.
            const expect = s.kind === "conditional" && !isService(t.kind) ? 200 : s.expect;
            const headers = { "X-API-Key": key, ...(s.headers && isService(t.kind) ? await s.headers(urls.get(t.id)!) : {}) };
            const pid = running.get(t.id)!.pid!;
            const cpuBefore = cpuMicros(pid);
            const dbBefore = await backendCpu(t.id);
            // A whole list of a large community can take longer than autocannon's 10 s: it is not a failure.
            const timeout = s.kind === "list" || s.kind === "conditional" ? Math.max(120, 2 * DURATION) : 10;
            const result = await drive(LOAD, {
              url: urls.get(t.id)!, connections: s.connections, duration: DURATION, timeout, headers, requests: s.request(), wrkRequest: s.wrkRequest?.(), expect,
            });
            const cpu = (cpuMicros(pid) - cpuBefore) / Math.max(1, result.total);
            const dbCpu = backendCpuSpent(dbBefore, await backendCpu(t.id)) / Math.max(1, result.total);
            const bad = result.bad;
            const sampleKey = `${s.name}|${t.id}`;
            // Requests completed over the run: a list of a large community takes seconds, so a per-second mean would round to 0.
            const rps = result.total / result.seconds;
            samples.set(sampleKey, [...(samples.get(sampleKey) ?? []), { rps, p50: result.p50, p99: result.p99, cpu, dbCpu, bad }]);
            console.log(
              `round ${round} ${s.name} ${KINDS[t.kind].label} on Node ${t.runtime.major}: ${perSecond(rps)} req/s, ` +
              `p99 ${result.p99} ms, ${cpu.toFixed(0)} µs CPU/request (+ ${dbCpu.toFixed(0)} in PostgreSQL), unexpected ${bad}, RSS ${rssMb(pid, "VmRSS").toFixed(0)} MB`,
            );
          }
        }
        await stopGroup(group);
      }
    }

    let listLines: string[] = [];
    if (args.lists) {
      // Each server alone, not warmed by autocannon (which would leave whole lists being built after it hung up): checking its answers warms it.
      const listServer = async (t: Target): Promise<ListServer> => {
        const urls = await startGroup([t], false);
        const pid = running.get(t.id)!.pid!;
        return { label: `${KINDS[t.kind].label}, Node ${t.runtime.major}`, base: urls.get(t.id)!, rssMb: () => rssMb(pid, "VmRSS") };
      };
      const lean = targets.find((t) => t.kind === "service")!;
      // With --production, the service in production settings too (4 lists at once), then the reference servers.
      const references = targets.filter((t) => t.runtime === lean.runtime && (t.kind === "service-production" || !isService(t.kind)));
      console.log("large lists: 4 at once on each server, a paged walk, a sync of 1 % changed rows…");
      listLines = await measureLists(
        await listServer(lean),
        references.map((t) => ({ start: () => listServer(t), stop: () => stopGroup([t]) })),
        key,
        dbUrl,
      );
      await stopGroup([lean]);
    }

    const m = (name: string, t: Target, k: keyof Sample) => median(samples.get(`${name}|${t.id}`)!.map((x) => x[k]));
    const same = (kind: Kind, t: Target) => targets.find((p) => p.kind === kind && p.runtime === t.runtime)!;
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const lines = [
      SECTION_START,
      "## Servers and runtimes",
      "",
      `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npm run bench -- ${process.argv.slice(2).join(" ")}\`): ${PLAYERS} players, ` +
        (ROUNDS > 0 ? `${ROUNDS} rounds of ${DURATION} s per route and server after ${WARMUP} s of warm-up each, medians of the rounds.` : "no autocannon rounds."),
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadAtStart} at the start ` +
        `and ${loadAverage()} at the end (other work shares the machine); PostgreSQL and ${LOAD} (the load) on the same machine.`,
      `Runtimes: ${found.map((r) => `Node ${r.version}`).join(", ")}. Service settings: lean = log level warn, no metrics listener, rate limits off` +
        (args.production
          ? "; production = request log at info, metrics served, both rate limits counted in Redis (never reached); the same without the request log line (log level warn); lean + rate limits in Redis = lean with both limits counted in Redis."
          : "."),
      "CPU = the server process's own user + system time per request served; DB CPU = that of the PostgreSQL backends serving its connections " +
        "(on the same cores). ×plain, ×Express = against node:http + pg, Express 5 + pg on the same runtime (req/s: higher is better; CPU: lower is better).",
    ];
    if (ROUNDS > 0) {
      lines.push(
        "",
        "| route | conns | server | Node | req/s | ×plain | p50 ms | p99 ms | CPU µs/req | CPU ×plain | CPU ×Express | DB CPU µs/req | DB ×Express | unexpected |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
      );
    }
    for (const s of ROUNDS > 0 ? selected : []) {
      for (const t of targets) {
        const [plain, express] = [same("plain", t), same("express", t)];
        const bad = samples.get(`${s.name}|${t.id}`)!.reduce((n, x) => n + x.bad, 0);
        const cpu = m(s.name, t, "cpu");
        lines.push(
          `| ${s.name} | ${s.connections} | ${KINDS[t.kind].label} | ${t.runtime.major} | ${perSecond(m(s.name, t, "rps"))} | ${ratio(m(s.name, t, "rps"), m(s.name, plain, "rps"))} | ` +
            `${m(s.name, t, "p50")} | ${m(s.name, t, "p99")} | ${cpu.toFixed(0)} | ${ratio(cpu, m(s.name, plain, "cpu"))} | ${ratio(cpu, m(s.name, express, "cpu"))} | ` +
            `${m(s.name, t, "dbCpu").toFixed(0)} | ${ratio(m(s.name, t, "dbCpu"), m(s.name, express, "dbCpu"))} | ${bad} |`,
        );
      }
    }
    if (ROUNDS > 0) lines.push("", "CPU µs per request at a glance:", "", `| route | ${targets.map((t) => `${KINDS[t.kind].label}, Node ${t.runtime.major}`).join(" | ")} |`, `|---|${targets.map(() => "---|").join("")}`);
    for (const s of ROUNDS > 0 ? selected : []) lines.push(`| ${s.name} | ${targets.map((t) => m(s.name, t, "cpu").toFixed(0)).join(" | ")} |`);
    lines.push(
      "",
      `Peak RSS over the run (MB): ${targets.map((t) => `${KINDS[t.kind].label} on ${t.runtime.major}: ${(peakRss.get(t.id) ?? 0).toFixed(0)}`).join("; ")}. ` +
        `Import of the community: ${loadSeconds.toFixed(1)} s.`,
      ...listLines,
      SECTION_END,
    );
    const section = lines.join("\n");
    console.log(`\n${section}`);
    const previous = existsSync(args.out) ? readFileSync(args.out, "utf8") : "";
    const [before, rest] = previous.includes(SECTION_START) ? previous.split(SECTION_START) : [previous, undefined];
    const after = rest?.includes(SECTION_END) ? rest.slice(rest.indexOf(SECTION_END) + SECTION_END.length) : "";
    writeFileSync(args.out, `${before.trimEnd()}${before.trim() ? "\n\n" : ""}${section}${after.trimEnd() ? after : ""}\n`);
    console.log(`\nwritten to ${args.out}`);
  } finally {
    await Promise.all([...running.values()].map(stop));
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    if (args.production) await dropRedisKeys(redisPrefix);
  }
}

await main();
