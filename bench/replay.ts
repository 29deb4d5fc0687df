// What replays of the event stream cost another caller (issue 37): its point reads, quiet and while four
// loops replay GET /api/events from an old position. See bench/README.md.
//   npx tsx bench/replay.ts [--events 300000] [--rare 40] [--players 10000] [--rounds 3] [--seconds 15]
//                           [--connections 4] [--users one,four] [--read cosmetic|nick] [--production]
// This file is the driver (options, the database, the service, the phases in their order, writing the
// section): the events and the replays are in replay-events.ts, the section in replay-report.ts.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";
import { availableTool, drive } from "./load.js";
import { cpuSeconds as cpuSecondsOf, loadAverage } from "./proc.js";
import { currentPosition, loops, RARE_TYPE, type Replay, replay, sleep, writeEvents } from "./replay-events.js";
import { type Phase, replaySection, SECTION } from "./replay-report.js";
import { dropRedisKeys, productionSettings, scratchDatabase, startService } from "./service.js";

const option = (value: string) => ({ type: "string", default: value }) as const;
const { values } = parseArgs({
  options: {
    ...{ events: option("300000"), rare: option("40"), players: option("10000"), rounds: option("3"), seconds: option("15") },
    ...{ connections: option("4"), users: option("one,four"), read: option("cosmetic"), out: option("bench/results.md") },
    // Each API user's replays at most this many a minute (the service's default RATE_LIMIT_PER_MINUTE); 0: as fast as they go.
    "per-minute": option("600"),
    production: { type: "boolean", default: false },
    load: { type: "string" },
  },
});
const EVENTS = Number(values.events);
const RARE = Math.max(1, Number(values.rare));
const PER_MINUTE = Number(values["per-minute"]);
const PLAYERS = Number(values.players);
const SECONDS = Number(values.seconds);
const LOOPS = 4;
const TOOL = availableTool(values.load);
const scratch = scratchDatabase("bench_replay");
const redisPrefix = `bench_replay_${process.pid}:`;

/** CPU seconds (utime + stime) a process has used; 0 once it is gone. */
const cpuSeconds = (pid: number) => {
  try {
    return cpuSecondsOf(pid);
  } catch {
    return 0;
  }
};

async function main(): Promise<void> {
  const database = new URL(scratch.url).pathname.slice(1);
  await scratch.create();
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" });
  await admin.connect();
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  /** CPU seconds of each PostgreSQL backend connected to the scratch database. */
  const backendsCpu = async () => {
    const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [database]);
    return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
  };
  try {
    const db = openDatabase({ kind: "postgres", url: scratch.url, poolMax: 2 });
    await migrate(db, createLogger("silent"));
    const data = community(PLAYERS);
    for (const [name, rows] of Object.entries(data)) await importData(db.prisma, { [name]: rows });
    const names = ["bench-reader", ...Array.from({ length: LOOPS }, (_, i) => `bench-replay-${i + 1}`)];
    const [readerKey, ...loopKeys] = await names.reduce<Promise<string[]>>(
      async (keys, name) => [...(await keys), (await new ApiUsers(db.prisma).create(name)).apiKey],
      Promise.resolve([]),
    );
    await db.close();
    const settings = values.production ? productionSettings(redisPrefix) : {};
    service = await startService(scratch.url, { EVENTS_STREAMS_PER_USER: "8", CALLERS_USER_A: names.join(","), ...settings }, "ignore");
    const { url } = service;
    const pid = service.child.pid!;
    const from = await currentPosition(url, loopKeys[0]!);
    const writer = new pg.Client({ connectionString: scratch.url });
    await writer.connect();
    await writeEvents(writer, { events: EVENTS, rare: RARE, players: PLAYERS });
    const { rows } = await writer.query<{ n: string; rare: string }>("SELECT count(*) AS n, count(*) FILTER (WHERE type = $1) AS rare FROM webhook_events", [
      RARE_TYPE,
    ]);
    await writer.end();
    const outbox = Number(rows[0]!.n);
    const rare = Number(rows[0]!.rare) - data.parkourMaps.length;

    const route = values.read === "nick" ? "/api/player/get-player-by-nick" : "/api/cosmetic/get-cosmetic";
    let n = 0;
    const query = () => (values.read === "nick" ? `nick=Player${(n++ * 7919) % PLAYERS}` : `id=${(n++ % data.cosmetics.length) + 1}`);
    const read = (seconds: number) =>
      drive(TOOL, {
        ...{ url, connections: Number(values.connections), duration: seconds, timeout: 10, expect: 200, headers: { "X-API-Key": readerKey! } },
        requests: [{ method: "GET", path: route, setupRequest: (req) => ({ ...req, path: `${route}?${query()}` }) }],
      });
    const kinds = { rare: RARE_TYPE, all: undefined };
    /** Replays until one caught up (after a 429, waits as told): its time since `since`, and its events. */
    const caughtUp = async (key: string, types: string | undefined, since = performance.now()): Promise<Replay> => {
      const r = await replay(url, key, types, from, AbortSignal.timeout(600_000));
      if (r.done) return { ...r, ms: performance.now() - since };
      if (r.refused === undefined) throw new Error(`a replay of ${types ?? "every type"} ended after ${r.events} events, before the last`);
      await sleep(Math.min(5, r.refused) * 1_000);
      return caughtUp(key, types, since);
    };
    // Warm-up (V8 compiles the hot paths; PostgreSQL's caches fill), and replays alone on the quiet service.
    await read(5);
    const aloneRuns = {
      rare: [await caughtUp(loopKeys[0]!, RARE_TYPE), await caughtUp(loopKeys[0]!, RARE_TYPE)],
      all: [await caughtUp(loopKeys[0]!, undefined)],
    };
    console.log(
      `${outbox} events in the outbox; alone: ${aloneRuns.rare.map((r) => Math.round(r.ms)).join(", ")} ms (rare), ${Math.round(aloneRuns.all[0]!.ms)} ms (all)`,
    );

    const variants = values.users.split(",").map((u) => ({ label: u, keys: u === "one" ? loopKeys.map(() => loopKeys[0]!) : loopKeys }));
    const plan: { name: string; kind?: keyof typeof kinds; keys?: string[] }[] = [
      { name: "quiet" },
      ...(["rare", "all"] as const).flatMap((kind) => variants.map((v) => ({ name: `${kind}, ${v.label}`, kind, keys: v.keys }))),
    ];
    const results = new Map<string, Phase[]>(plan.map((p) => [p.name, []]));
    const loadAtStart = loadAverage();
    // Four replays of every type at once, nothing else running: when each caught up.
    const together = new Map<string, number[]>();
    for (const v of variants) {
      const t = performance.now();
      together.set(
        v.label,
        (await Promise.all(v.keys.map((k) => caughtUp(k, undefined, t)))).map((r) => r.ms).sort((a, b) => a - b),
      );
    }
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const step of round % 2 ? [...plan].reverse() : plan) {
        const stop = new AbortController();
        const loopStart = performance.now();
        const running = step.kind ? loops(url, step.keys!, kinds[step.kind], from, stop.signal, PER_MINUTE) : Promise.resolve([]);
        if (step.kind) await sleep(1_000);
        const cpu0 = cpuSeconds(pid);
        const db0 = await backendsCpu();
        const t = performance.now();
        const r = await read(SECONDS);
        const elapsed = (performance.now() - t) / 1000;
        const db1 = await backendsCpu();
        const serviceCpu = (cpuSeconds(pid) - cpu0) / elapsed;
        const dbCpu = [...db1].reduce((sum, [p, s]) => sum + s - (db0.get(p) ?? 0), 0) / elapsed;
        stop.abort();
        const replays = await running;
        const loopSeconds = (performance.now() - loopStart) / 1000;
        results.get(step.name)!.push({ rps: r.total / r.seconds, p50: r.p50, p99: r.p99, bad: r.bad, replays, loopSeconds, serviceCpu, dbCpu });
        console.log(
          `round ${round + 1}, ${step.name}: ${Math.round(r.total / r.seconds)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms; ${replays.filter((x) => x.done).length} replays caught up`,
        );
        await sleep(1_000);
      }
    }

    const section = replaySection({
      events: EVENTS,
      rare: RARE,
      players: PLAYERS,
      rounds: values.rounds,
      seconds: SECONDS,
      connections: values.connections,
      users: values.users,
      read: values.read,
      production: values.production,
      perMinute: PER_MINUTE,
      loops: LOOPS,
      tool: TOOL,
      route,
      loadAtStart,
      outbox,
      rareCount: rare,
      aloneRuns,
      together,
      plan,
      results,
    });
    console.log(section);
    const out = path.resolve(import.meta.dirname, "..", values.out);
    const current = existsSync(out) ? readFileSync(out, "utf8") : "";
    writeFileSync(out, SECTION.test(current) ? current.replace(SECTION, section) : `${current.trimEnd()}\n\n${section}\n`);
  } finally {
    const child = service?.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await admin.end();
    await scratch.drop();
    if (values.production) await dropRedisKeys(redisPrefix);
  }
}

await main();
