/**
 * npm run bench:profile [-- --route get-player-by-nick --seconds 8 --runtime 24 --production --top 30]
 *
 * Where a point read's CPU goes: starts the service with --cpu-prof on a
 * database of 10,000 players, loads one route with autocannon, and prints the
 * service's self time grouped by package (express, router, prisma, pg, pino,
 * zod, our code, Node itself) per request, then the functions with the most
 * self time. The service runs with the bench's lean settings (log level warn,
 * rate limits off), or its production ones with --production (request log at
 * info, limits on in Redis, never reached), on the Node of --runtime (default:
 * 24, through scripts/node-runtime.mjs).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";
import { dropRedisKeys, BENCH_REDIS_URL as REDIS_URL, scratchDatabase, startFlags } from "./service.js";

const { values: args } = parseArgs({
  options: {
    route: { type: "string", default: "get-player-by-nick" },
    seconds: { type: "string", default: "8" },
    runtime: { type: "string", default: "24" },
    production: { type: "boolean", default: false },
    top: { type: "string", default: "25" },
  },
});
let rewardId = 5_000_000;
/** The request of each route profiled: a point read, or a write whose reward ids never repeat. */
const REQUESTS: Record<string, () => { method: "GET" | "POST"; path: string; body?: string }> = {
  "get-player-by-nick": () => ({ method: "GET", path: `/api/player/get-player-by-nick?nick=Player${Math.floor(Math.random() * 10000)}` }),
  "get-cosmetic": () => ({ method: "GET", path: `/api/cosmetic/get-cosmetic?id=${1 + Math.floor(Math.random() * 1000)}` }),
  "create-reward-log": () => ({
    method: "POST",
    path: "/api/website/create-reward-log",
    body: JSON.stringify({ playerId: 1 + Math.floor(Math.random() * 10000), rewardId: rewardId++ }),
  }),
};

const scratch = scratchDatabase("profile");
/** The database's name: also the prefix of the rate limits' counters in Redis (--production). */
const name = new URL(scratch.url).pathname.slice(1);
await scratch.create();
try {
  const db = openDatabase({ kind: "postgres", url: scratch.url, poolMax: 2 });
  await migrate(db, createLogger("silent"));
  await importData(db.prisma, community(10_000));
  const key = (await new ApiUsers(db.prisma).create("user-A")).apiKey;
  await db.close();

  const dir = mkdtempSync(path.join(tmpdir(), "cpu-"));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const node = execFileSync(process.execPath, ["scripts/node-runtime.mjs", args.runtime], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  // As in npm run bench: lean settings measure the route; --production adds the request log and the limits in Redis.
  const settings = args.production
    ? { LOG_LEVEL: "info", RATE_LIMIT_PER_MINUTE: "10000000", AUTH_FAILURES_PER_MINUTE: "10000000", REDIS_URL, REDIS_KEY_PREFIX: `${name}:` }
    : { LOG_LEVEL: "warn", RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0", REDIS_URL: "" };
  const service = spawn(node, ["--cpu-prof", `--cpu-prof-dir=${dir}`, ...startFlags(), "dist/main.js"], {
    env: {
      ...process.env,
      ...settings,
      DATABASE_URL: scratch.url,
      DATABASE_READ_URL: "",
      WEB_CONCURRENCY: "1",
      METRICS_PORT: "off",
      PORT: String(port),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`${base}/api/parkour/get-all-maps`, { headers: { "X-API-Key": key } }).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const makeRequest = REQUESTS[args.route ?? "get-player-by-nick"];
  if (!makeRequest) throw new Error(`--route: one of ${Object.keys(REQUESTS).join(", ")}`);
  // The profile's clock is CLOCK_MONOTONIC in µs, as process.hrtime is: only samples taken under load count, not start-up.
  const loadStart = Number(process.hrtime.bigint() / 1000n);
  const result = await autocannon({
    url: base,
    connections: 32,
    duration: Number(args.seconds),
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    requests: [{ setupRequest: (req) => ({ ...req, ...makeRequest() }) }],
  });
  const loadEnd = Number(process.hrtime.bigint() / 1000n);
  const exited = new Promise((r) => service.on("exit", r));
  service.kill("SIGTERM");
  await exited;

  const unexpected = result.non2xx + result.errors + result.timeouts;
  if (unexpected) console.warn(`${unexpected} answers were not 2xx: the profile is not of the route's normal answer`);
  type Node = { id: number; callFrame: { url: string; functionName: string; lineNumber: number }; hitCount: number };
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))!;
  const profile = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as {
    nodes: Node[];
    startTime: number;
    endTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const interval = (profile.endTime - profile.startTime) / profile.samples.length; // µs per sample
  // Hits counted again from the samples taken while the load ran.
  const hits = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i]!;
    if (at >= loadStart && at <= loadEnd) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  for (const n of profile.nodes) n.hitCount = hits.get(n.id) ?? 0;
  const bucket = (u: string, fn: string) => {
    if (!u) return fn === "(idle)" ? "idle" : fn === "(garbage collector)" ? "garbage collection" : "node (native)";
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    if (m) return m[1]!;
    if (u.includes("/dist/")) return "this service";
    return "node (internals)";
  };
  const totals = new Map<string, number>();
  for (const n of profile.nodes)
    totals.set(bucket(n.callFrame.url, n.callFrame.functionName), (totals.get(bucket(n.callFrame.url, n.callFrame.functionName)) ?? 0) + n.hitCount * interval);
  const requests = result.requests.total;
  console.log(`profile: ${path.join(dir, file)}`);
  console.log(`${args.route}: ${result.requests.average.toFixed(0)} req/s over ${args.seconds} s, ${requests} requests`);
  console.log("| where | CPU µs per request |\n|---|---|");
  let busy = 0;
  for (const [k, us] of [...totals].sort((a, b) => b[1] - a[1])) {
    if (k === "idle") continue;
    busy += us;
    if (us / requests >= 1) console.log(`| ${k} | ${(us / requests).toFixed(0)} |`);
  }
  console.log(`| **total busy** | ${(busy / requests).toFixed(0)} |`);
  const byFunction = new Map<string, number>();
  for (const n of profile.nodes) {
    const { functionName, url: u, lineNumber } = n.callFrame;
    if (functionName === "(idle)") continue;
    const where = `${functionName || "(anonymous)"} ${u.replace(/.*node_modules\//, "").replace(/.*\/dist\//, "dist/")}:${lineNumber + 1}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + n.hitCount * interval);
  }
  console.log("\n| function (self time) | CPU µs per request |\n|---|---|");
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) console.log(`| ${k} | ${(us / requests).toFixed(1)} |`);
} finally {
  await scratch.drop();
  if (args.production) await dropRedisKeys(`${name}:`);
}
