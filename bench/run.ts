/**
 * npm run bench [-- --players 10000 --rounds 3 --duration 8 --out bench/results.md]
 *
 * Creates a database on the PostgreSQL server of DATABASE_URL (default: the
 * local one), loads a synthetic community through the operators' import path,
 * starts the service (dist/main.js) and the baseline (bench/baseline), checks
 * that they answer byte-identical JSON, then drives the same routes on both
 * with autocannon, alternating which goes first, over several rounds. Prints
 * and writes medians per route: req/s, ratio, p50/p99, non-2xx, and the
 * service's peak RSS. Load goes to 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/logger.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";

const { values: args } = parseArgs({
  options: {
    players: { type: "string", default: "10000" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    only: { type: "string" },
    out: { type: "string", default: "bench/results.md" },
  },
});
const PLAYERS = Number(args.players);
const ROUNDS = Number(args.rounds);
const DURATION = Number(args.duration);
const SERVER_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SERVICE_NODE_OPTIONS = /node (--[^ ]+(?: --[^ ]+)*) dist\/main\.js/.exec(
  (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } }).scripts.start,
)?.[1] ?? "";

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

function start(name: string, script: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  child.on("exit", (code) => {
    if (code && code !== 0) console.error(`${name} exited with ${code}:\n${err}`);
  });
  return Promise.resolve(child);
}

async function waitReady(url: string, key: string) {
  for (let i = 0; i < 100; i++) {
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

interface Scenario {
  name: string;
  kind: "point" | "list" | "write" | "conditional";
  connections: number;
  request: (target: "service" | "baseline") => autocannon.Request[];
  headers?: (url: string, key: string) => Promise<Record<string, string>>;
  expect: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const dbName = `bench_${randomBytes(4).toString("hex")}`;
  const url = new URL(SERVER_URL);
  url.pathname = `/${dbName}`;
  const dbUrl = url.toString();
  await admin(`CREATE DATABASE "${dbName}"`);
  const children: ChildProcess[] = [];
  try {
    console.log(`database ${dbName}: loading ${PLAYERS} players through the import path…`);
    const db = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 4 });
    await migrate(db, createLogger("silent"));
    const data = community(PLAYERS);
    const t0 = Date.now();
    await importData(db.prisma, data);
    const loadSeconds = (Date.now() - t0) / 1000;
    const key = (await new ApiUsers(db.prisma).create("user-A")).apiKey;
    await db.close();
    console.log(`loaded in ${loadSeconds.toFixed(1)} s`);

    const [servicePort, baselinePort] = [await freePort(), await freePort()];
    const env = { DATABASE_URL: dbUrl, HOST: "127.0.0.1", LOG_LEVEL: "info", NODE_ENV: "production" };
    // One key sends thousands of requests a second: the limits are off, so the bench measures the routes.
    const limitsOff = { RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0" };
    // The service runs as `npm start` runs it: with its memory flags.
    const service = await start("service", "dist/main.js", {
      ...env,
      ...limitsOff,
      PORT: String(servicePort),
      METRICS_PORT: "0",
      NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS,
    });
    const baseline = await start("baseline", "bench/baseline/server.mjs", { ...env, PORT: String(baselinePort) });
    children.push(service, baseline);
    const targets = { service: `http://127.0.0.1:${servicePort}`, baseline: `http://127.0.0.1:${baselinePort}` };
    await waitReady(targets.service, key);
    await waitReady(targets.baseline, key);
    console.log(`service RSS at start: ${rssMb(service.pid!, "VmRSS").toFixed(0)} MB`);

    const nicks = Array.from({ length: 200 }, (_, i) => (i % 2 ? `player${(i * 37) % PLAYERS}` : `NICK${(i * 53) % PLAYERS}`));
    const cosmeticIds = data.cosmetics.map((c) => c.id);
    const worldIds = data.worlds.map((w) => w.id);
    let counter = 0;
    const pick = <T,>(xs: T[]) => xs[counter++ % xs.length]!;
    const rewardBase = { service: 1_000_000, baseline: 500_000_000 };
    const get = (path: string, query?: () => string): autocannon.Request[] => [
      { method: "GET", path, setupRequest: (req) => ({ ...req, path: query ? `${path}?${query()}` : path }) },
    ];
    const etagOf = async (target: string, path: string) => {
      const res = await fetch(`${target}${path}`, { headers: { "X-API-Key": key } });
      return res.headers.get("etag");
    };

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
        request: (target) => [{
          method: "POST", path: "/api/website/create-reward-log",
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, "content-type": "application/json" }, body: JSON.stringify({ playerId: 1 + (counter % PLAYERS), rewardId: rewardBase[target] + counter++ }) }),
        }],
      },
      {
        name: "update-world", kind: "write", connections: 16, expect: 200,
        request: () => [{
          method: "PATCH", path: "/api/freebuild/update-world",
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, "content-type": "application/json" }, body: JSON.stringify({ id: pick(worldIds), gamerulePvp: counter % 2 === 0, tag: `t${counter++ % 100}` }) }),
        }],
      },
    ];
    for (const path of ["/api/player/get-all-players", "/api/infecte2/get-all-infectes", "/api/parkour/get-all-maps", "/api/temporary-item/get-active-items"]) {
      scenarios.push({
        name: `${path.split("/").pop()} (If-None-Match)`, kind: "conditional", connections: 32, expect: 304,
        request: () => get(path),
        headers: async (target): Promise<Record<string, string>> => {
          const etag = await etagOf(target, path);
          return etag ? { "If-None-Match": etag } : {};
        },
      });
    }

    // Same answers, byte for byte, before any load.
    for (const path of ["/api/player/get-all-players", "/api/player/get-all-full-players-by-gradeId?gradeId=3", "/api/player/get-player-by-nick?nick=NICK12", "/api/cosmetic/get-cosmetic?id=5", "/api/infecte2/get-all-infectes", "/api/temporary-item/get-active-items", "/api/parkour/get-all-maps"]) {
      const [a, b] = await Promise.all([targets.service, targets.baseline].map(async (t) => (await fetch(`${t}${path}`, { headers: { "X-API-Key": key } })).text()));
      if (a !== b) throw new Error(`service and baseline differ on ${path}:\n${a?.slice(0, 300)}\n${b?.slice(0, 300)}`);
    }
    console.log("service and baseline answer byte-identical JSON");

    type Sample = { rps: number; p50: number; p99: number; bad: number };
    const results = new Map<string, { service: Sample[]; baseline: Sample[] }>();
    const selected = scenarios.filter((s) => !args.only || s.name.includes(args.only));
    // Warm-up: JIT, connection pools and PostgreSQL's caches, on both, before anything is counted.
    for (const s of selected) {
      for (const target of ["service", "baseline"] as const) {
        const headers = { "X-API-Key": key, ...(s.headers && target === "service" ? await s.headers(targets[target], key) : {}) };
        await autocannon({ url: targets[target], connections: s.connections, duration: 1, headers, requests: s.request(target) });
      }
    }
    console.log(`warmed up; service RSS ${rssMb(service.pid!, "VmRSS").toFixed(0)} MB`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of selected) {
        const order: ("service" | "baseline")[] = round % 2 ? ["service", "baseline"] : ["baseline", "service"];
        for (const target of order) {
          // The baseline has no conditional GETs: its row is its full answer.
          const expect = s.kind === "conditional" && target === "baseline" ? 200 : s.expect;
          const headers = { "X-API-Key": key, ...(s.headers && target === "service" ? await s.headers(targets[target], key) : {}) };
          const result = await autocannon({ url: targets[target], connections: s.connections, duration: DURATION, headers, requests: s.request(target) });
          const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
          const bad = Object.entries(stats).filter(([code]) => Number(code) !== expect).reduce((n, [, v]) => n + v.count, 0) + result.errors + result.timeouts;
          const entry = results.get(s.name) ?? { service: [], baseline: [] };
          entry[target].push({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, bad });
          results.set(s.name, entry);
          const memory = target === "service" ? `, service RSS ${rssMb(service.pid!, "VmRSS").toFixed(0)} MB (peak ${rssMb(service.pid!).toFixed(0)})` : "";
          console.log(`round ${round} ${s.name} ${target}: ${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms, unexpected ${bad}${memory}`);
        }
      }
    }

    const rss = rssMb(service.pid!);
    const lines = [
      `Run of ${new Date().toISOString().slice(0, 16)}Z: ${PLAYERS} players, ${ROUNDS} rounds of ${DURATION} s per route and server, medians.`,
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, PostgreSQL on the same machine; load from autocannon in the same machine.`,
      "",
      "| route | conns | service req/s | baseline req/s | ratio | p50 ms (s / b) | p99 ms (s / b) | unexpected status (s / b) |",
      "|---|---|---|---|---|---|---|---|",
    ];
    for (const s of selected) {
      const r = results.get(s.name)!;
      const m = (t: "service" | "baseline", k: keyof Sample) => median(r[t].map((x) => x[k]));
      const sum = (t: "service" | "baseline") => r[t].reduce((n, x) => n + x.bad, 0);
      lines.push(
        `| ${s.name} | ${s.connections} | ${m("service", "rps").toFixed(0)} | ${m("baseline", "rps").toFixed(0)} | ${(m("service", "rps") / m("baseline", "rps")).toFixed(2)}× | ${m("service", "p50")} / ${m("baseline", "p50")} | ${m("service", "p99")} / ${m("baseline", "p99")} | ${sum("service")} / ${sum("baseline")} |`,
      );
    }
    lines.push("", `Service peak RSS over the run: ${rss.toFixed(0)} MB. Import of the community: ${loadSeconds.toFixed(1)} s.`);
    const table = lines.join("\n");
    console.log(`\n${table}`);
    writeFileSync(args.out, `${table}\n`);
    console.log(`\nwritten to ${args.out}`);
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
}

await main();
