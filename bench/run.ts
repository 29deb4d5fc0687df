/**
 * npm run bench [-- --players 10000 --rounds 3 --duration 8 --warmup 5 --runtimes 24,22,26 --production --tracing --only nick,reward --lists --out bench/results.md
 *                  --load wrk|autocannon --servers service-production,express]
 *
 * Creates a database on the PostgreSQL server of DATABASE_URL (default: the
 * local one) and loads a synthetic community through the operators' import
 * path. Then, on that data, for each Node runtime (--runtimes, default 24, the
 * image's; the maintained lines only, 22, 24 and 26, which come from the npm registry through
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
 *
 * This file is the driver (options, the database, the run order); the servers compared are in
 * run-servers.ts, the routes and one load run in run-scenarios.ts, the section in run-report.ts.
 */
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";
import { type ListServer, measureLists } from "./lists.js";
import { availableTool } from "./load.js";
import { startSink } from "./otlp-sink.js";
import { loadAverage, rssMb } from "./proc.js";
import { perSecond, runSection, writeSection } from "./run-report.js";
import { loadRun, type Sample, type Scenario, scenarios, selectScenarios } from "./run-scenarios.js";
import { collector, isService, KINDS, kindsOf, runtimes, Servers, type Target } from "./run-servers.js";
import { BENCH_REDIS_URL, dropRedisKeys, scratchDatabase } from "./service.js";

const { values: args } = parseArgs({
  options: {
    players: { type: "string", default: "10000" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "5" },
    only: { type: "string" },
    runtimes: { type: "string" },
    production: { type: "boolean", default: false },
    tracing: { type: "boolean", default: false },
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

async function main() {
  const found = runtimes(args.runtimes);
  const kinds = kindsOf(args.production, args.servers, args.tracing);
  const targets: Target[] = found.flatMap((runtime) => kinds.map((kind) => ({ id: `${kind}@${runtime.major}`, kind, runtime })));
  const scratch = scratchDatabase("bench");
  const dbName = new URL(scratch.url).pathname.slice(1);
  const redisPrefix = `${dbName}:`;
  if (args.production) {
    const redis = new Redis(BENCH_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await redis
      .connect()
      .then(() => redis.ping())
      .catch(() => {
        throw new Error(`--production needs Redis at ${BENCH_REDIS_URL} (BENCH_REDIS_URL)`);
      });
    redis.disconnect();
  }

  const dbUrl = scratch.url;
  await scratch.create();
  // With --tracing: a collector for the traced servers, taking OTLP/HTTP and keeping nothing (closed in the finally below).
  const sink = args.tracing ? await startSink() : undefined;
  if (sink) collector.url = sink.url;
  const servers = new Servers(dbUrl, redisPrefix);
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

    const selected = selectScenarios(scenarios(data, PLAYERS, key), args.only);
    const samples = new Map<string, Sample[]>();
    const headersOf = async (s: Scenario, t: Target, url: string) => ({
      "X-API-Key": key,
      ...(s.headers && isService(t.kind) ? await s.headers(url) : {}),
    });

    /** Starts one runtime's servers, checks their answers, warms them up (unless told not to). */
    const startGroup = async (group: Target[], warm = true) => {
      const urls = await servers.start(group, key);
      // JIT, connection pools and PostgreSQL's caches, before anything is counted.
      for (const s of warm ? selected : []) {
        for (const t of group) {
          const headers = await headersOf(s, t, urls.get(t.id)!);
          await autocannon({ url: urls.get(t.id)!, connections: s.connections, duration: WARMUP, headers, requests: s.request() });
        }
      }
      return urls;
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
            const headers = await headersOf(s, t, urls.get(t.id)!);
            const pid = servers.pid(t);
            const sample = await loadRun(LOAD, s, { url: urls.get(t.id)!, pid, appName: t.id, serverUrl: SERVER_URL }, { duration: DURATION, expect, headers });
            const sampleKey = `${s.name}|${t.id}`;
            samples.set(sampleKey, [...(samples.get(sampleKey) ?? []), sample]);
            console.log(
              `round ${round} ${s.name} ${KINDS[t.kind].label} on Node ${t.runtime.major}: ${perSecond(sample.rps)} req/s, ` +
                `p99 ${sample.p99} ms, ${sample.cpu.toFixed(0)} µs CPU/request (+ ${sample.dbCpu.toFixed(0)} in PostgreSQL), unexpected ${sample.bad}, RSS ${rssMb(pid, "VmRSS").toFixed(0)} MB`,
            );
          }
        }
        await servers.stop(group);
      }
    }

    let listLines: string[] = [];
    if (args.lists) {
      // Each server alone, not warmed by autocannon (which would leave whole lists being built after it hung up): checking its answers warms it.
      const listServer = async (t: Target): Promise<ListServer> => {
        const urls = await startGroup([t], false);
        const pid = servers.pid(t);
        return { label: `${KINDS[t.kind].label}, Node ${t.runtime.major}`, base: urls.get(t.id)!, rssMb: () => rssMb(pid, "VmRSS") };
      };
      const lean = targets.find((t) => t.kind === "service")!;
      // With --production, the service in production settings too (4 lists at once), then the reference servers.
      const references = targets.filter((t) => t.runtime === lean.runtime && (t.kind === "service-production" || !isService(t.kind)));
      console.log("large lists: 4 at once on each server, a paged walk, a sync of 1 % changed rows…");
      listLines = await measureLists(
        await listServer(lean),
        references.map((t) => ({ start: () => listServer(t), stop: () => servers.stop([t]) })),
        key,
        dbUrl,
      );
      await servers.stop([lean]);
    }

    const section = runSection({
      players: PLAYERS,
      rounds: ROUNDS,
      duration: DURATION,
      warmup: WARMUP,
      production: args.production,
      load: LOAD,
      loadAtStart,
      runtimes: found,
      targets,
      selected,
      samples,
      peakRss: servers.peakRss,
      loadSeconds,
      listLines,
    });
    console.log(`\n${section}`);
    writeSection(args.out, section);
    console.log(`\nwritten to ${args.out}`);
  } finally {
    await servers.stopAll();
    await sink?.close();
    if (sink) console.log(`the collector took ${sink.spans()} spans in ${sink.exports()} exports`);
    await scratch.drop();
    if (args.production) await dropRedisKeys(redisPrefix);
  }
}

await main();
