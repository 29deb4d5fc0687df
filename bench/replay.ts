// What replays of the event stream cost another caller (issue 37): its point reads, quiet and while four
// loops replay GET /api/events from an old position. See bench/README.md.
//   npx tsx bench/replay.ts [--events 300000] [--rare 40] [--players 10000] [--rounds 3] [--seconds 15]
//                           [--connections 4] [--users one,four] [--read cosmetic|nick] [--production]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/core/logger.js";
import { importData } from "../src/transfer/transfer.js";
import { ApiUsers } from "../src/users/users.js";
import { community } from "./community.js";
import { availableTool, drive } from "./load.js";
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
const RARE_TYPE = "parkour_map.created";
/** The name of the parkour map in the last event, written alone after the others: every replay ends with it. */
const END_NAME = "Replay end";
const TOOL = availableTool(values.load);
const scratch = scratchDatabase("bench_replay");
const redisPrefix = `bench_replay_${process.pid}:`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]! : Number.NaN);
const fmt = (n: number) => (Number.isNaN(n) ? "–" : n < 10 ? n.toFixed(1) : String(Math.round(n)));
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(", ");
/** CPU seconds (utime + stime) a process has used; 0 once it is gone. */
const cpuSeconds = (pid: number) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
};

/**
 * EVENTS events, in SQL: six transactions of the mix, then the last (of the rare type) alone. Bodies
 * are the import's (players, infected stats, cosmetics, worlds, temporary items, parkour maps; cycled)
 * or a reward log as create-reward-log answers it.
 */
async function writeEvents(client: pg.Client): Promise<void> {
  await client.query(`CREATE TEMP TABLE tmpl AS SELECT split_part(type, '.', 1) AS kind, data,
    row_number() OVER (PARTITION BY type ORDER BY id) - 1 AS n FROM webhook_events WHERE type LIKE '%.created'`);
  await client.query(`CREATE TEMP TABLE kinds AS SELECT kind, count(*) AS c FROM tmpl GROUP BY kind`);
  const part = Math.ceil((EVENTS - 1) / 6);
  for (let from = 1; from < EVENTS; from += part) {
    await client.query(
      `INSERT INTO webhook_events (type, data)
       SELECT CASE s.kind WHEN 'reward_log' THEN 'reward_log.created' WHEN 'parkour_map' THEN '${RARE_TYPE}' ELSE s.kind || '.updated' END,
              COALESCE(t.data, format('{"id":%s,"playerId":%s,"rewardId":%s,"rewardedAt":"%s"}', s.g, 1 + s.g % $3, s.g % 500,
                to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))
         FROM (SELECT g, CASE WHEN g % $4 = 0 THEN 'parkour_map' WHEN g % 100 < 50 THEN 'reward_log' WHEN g % 100 < 75 THEN 'player'
                              WHEN g % 100 < 85 THEN 'infected_stats' WHEN g % 100 < 92 THEN 'cosmetic' WHEN g % 100 < 97 THEN 'world'
                              ELSE 'temporary_item' END AS kind
                 FROM generate_series($1::int, $2::int) g) s
         LEFT JOIN kinds k ON k.kind = s.kind
         LEFT JOIN tmpl t ON t.kind = s.kind AND t.n = s.g % k.c
        ORDER BY s.g`,
      [from, Math.min(EVENTS - 1, from + part - 1), PLAYERS, Math.max(1, Math.floor(EVENTS / RARE))],
    );
  }
  const end = { id: 1_000_000, name: END_NAME, enable: true, spawnLocation: null, difficulty: "hard" };
  await client.query(`INSERT INTO webhook_events (type, data) VALUES ($1, $2)`, [RARE_TYPE, JSON.stringify(end)]);
}

/** The position a stream opened now starts from: its first `id:` line, as sent (ids are opaque: never built here). */
function currentPosition(url: string, key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events`, { headers: { "X-API-Key": key } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const id = /^id: (.*)$/m.exec((text += chunk))?.[1];
        if (id === undefined) return;
        resolve(id);
        req.destroy();
      });
    });
    req.on("error", reject);
  });
}

/** A replay: its time, the events it received, whether it caught up (the last event came), the wait a 429 told (s). */
type Replay = { ms: number; events: number; done: boolean; refused?: number };
const EVENT = Buffer.from("\nevent: ");
const END = Buffer.from(`"name":"${END_NAME}"`);

/** One replay: resumes after `from`, counts the events until the last one came (caught up), or `stop`. */
function replay(url: string, key: string, types: string | undefined, from: string, stop: AbortSignal): Promise<Replay> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let [events, carry] = [0, Buffer.alloc(0)];
    const end = (done: boolean) => {
      req.destroy();
      resolve({ ms: performance.now() - start, events, done });
    };
    const req = http.get(`${url}/api/events${types ? `?types=${types}` : ""}`, { headers: { "X-API-Key": key, "Last-Event-ID": from }, signal: stop }, (res) => {
      if (res.statusCode === 429) {
        res.resume();
        return resolve({ ms: 0, events: 0, done: false, refused: Number(res.headers["retry-after"] ?? 1) });
      }
      if (res.statusCode !== 200) return reject(new Error(`replay answered ${res.statusCode}`));
      res.on("data", (chunk: Buffer) => {
        const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        // Frames split across chunks: the carried bytes are searched again, an event counted only once.
        for (let at = buf.indexOf(EVENT, Math.max(0, carry.length - EVENT.length + 1)); at >= 0; at = buf.indexOf(EVENT, at + 1)) events++;
        const caughtUp = buf.includes(END);
        carry = Buffer.from(buf.subarray(Math.max(0, buf.length - END.length + 1)));
        if (caughtUp) end(true);
      });
      res.on("close", () => end(false));
    });
    req.on("error", () => end(false));
  });
}

/** One loop per key, each replaying again and again until `stop`; every replay they made. */
async function loops(url: string, keys: string[], types: string | undefined, from: string, stop: AbortSignal): Promise<Replay[]> {
  const loop = async (key: string) => {
    const made: Replay[] = [];
    // A user's loops share its budget: each starts a replay at most every `gap` ms, as a client within the rate limit would.
    const gap = PER_MINUTE > 0 ? (60_000 * keys.filter((k) => k === key).length) / PER_MINUTE : 0;
    while (!stop.aborted) {
      const started = performance.now();
      const r = await replay(url, key, types, from, stop);
      made.push(r);
      if (r.refused !== undefined) await sleep(Math.min(5, r.refused) * 1_000);
      else await sleep(Math.max(0, gap - (performance.now() - started)));
    }
    return made;
  };
  return (await Promise.all(keys.map(loop))).flat();
}

/** A phase's point reads (req/s, ms), the replays its loops made in `loopSeconds`, and CPU seconds per second. */
type Phase = { rps: number; p50: number; p99: number; bad: number; replays: Replay[]; loopSeconds: number; serviceCpu: number; dbCpu: number };

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
    const [readerKey, ...loopKeys] = await names.reduce<Promise<string[]>>(async (keys, name) => [...(await keys), (await new ApiUsers(db.prisma).create(name)).apiKey], Promise.resolve([]));
    await db.close();
    const settings = values.production ? productionSettings(redisPrefix) : {};
    service = await startService(scratch.url, { EVENTS_STREAMS_PER_USER: "8", CALLERS_USER_A: names.join(","), ...settings }, "ignore");
    const { url } = service;
    const pid = service.child.pid!;
    const from = await currentPosition(url, loopKeys[0]!);
    const writer = new pg.Client({ connectionString: scratch.url });
    await writer.connect();
    await writeEvents(writer);
    const { rows } = await writer.query<{ n: string; rare: string }>("SELECT count(*) AS n, count(*) FILTER (WHERE type = $1) AS rare FROM webhook_events", [RARE_TYPE]);
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
    const aloneRuns = { rare: [await caughtUp(loopKeys[0]!, RARE_TYPE), await caughtUp(loopKeys[0]!, RARE_TYPE)], all: [await caughtUp(loopKeys[0]!, undefined)] };
    console.log(`${outbox} events in the outbox; alone: ${aloneRuns.rare.map((r) => Math.round(r.ms)).join(", ")} ms (rare), ${Math.round(aloneRuns.all[0]!.ms)} ms (all)`);

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
      together.set(v.label, (await Promise.all(v.keys.map((k) => caughtUp(k, undefined, t)))).map((r) => r.ms).sort((a, b) => a - b));
    }
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const step of round % 2 ? [...plan].reverse() : plan) {
        const stop = new AbortController();
        const loopStart = performance.now();
        const running = step.kind ? loops(url, step.keys!, kinds[step.kind], from, stop.signal) : Promise.resolve([]);
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
        console.log(`round ${round + 1}, ${step.name}: ${Math.round(r.total / r.seconds)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms; ${replays.filter((x) => x.done).length} replays caught up`);
        await sleep(1_000);
      }
    }

    const q99 = median(results.get("quiet")!.map((p) => p.p99));
    const table = plan.map(({ name, kind }) => {
      const ps = results.get(name)!;
      const of = (f: (p: Phase) => number) => fmt(median(ps.map(f)));
      const done = ps.flatMap((p) => p.replays.filter((x) => x.done));
      const refused = ps.reduce((s, p) => s + p.replays.filter((x) => x.refused !== undefined).length, 0);
      const loopsCell = kind
        ? `${done.length} (${refused} refused) | ${done.length ? fmt(median(done.map((x) => x.ms))) : "–"} | ${done.length ? Math.round(median(done.map((x) => x.events))) : "–"} ` +
          `| ${of((p) => p.replays.reduce((s, x) => s + x.events, 0) / p.loopSeconds / LOOPS)}`
        : " | | | ";
      return `| ${name} | ${of((p) => p.rps)} | ${of((p) => p.p50)} | ${of((p) => p.p99)} | ${fmt(median(ps.map((p) => p.p99)) / q99)}× | ${loopsCell} | ${of((p) => p.serviceCpu)} | ${of((p) => p.dbCpu)} | ${ps.reduce((s, p) => s + p.bad, 0)} |`;
    });
    const options = `--events ${EVENTS} --rare ${RARE} --players ${PLAYERS} --rounds ${values.rounds} --seconds ${SECONDS} --connections ${values.connections} --users ${values.users} --read ${values.read}`;
    const section = [
      "<!-- bench/replay.ts: start -->",
      "## Replays of the event stream",
      "",
      `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/replay.ts ${options}${values.production ? " --production" : ""}\`): one instance of the service ` +
        `(${values.production ? "production settings: request log at info, metrics served, limits counted in Redis, never reached" : "limits off, logs at warn, no metrics"}; ` +
        `EVENTS_STREAMS_PER_USER 8) on the local PostgreSQL, all on this machine (${os.cpus().length} cores, shared); Node ${process.version}; ` +
        `load average ${loadAtStart} at the start, ${loadAverage()} at the end. ${outbox} events in the outbox, ${EVENTS} of them after the resume point ` +
        `(${rare} of them ${RARE_TYPE}), in 7 transactions. One replay alone on the quiet service: ${RARE_TYPE} ` +
        `${aloneRuns.rare.map((r) => `${Math.round(r.ms)} ms (${r.events} events)`).join(", ")}; every type ${Math.round(aloneRuns.all[0]!.ms)} ms (${aloneRuns.all[0]!.events} events). ` +
        `Four replays of every type at once, nothing else running, caught up after ` +
        `${[...together].map(([label, ms]) => `${ms.map((x) => fmt(x / 1000)).join(", ")} s (${label})`).join("; ")}.`,
      "",
      `Another API user's GET ${route} (${TOOL}, ${values.connections} connections, ${SECONDS} s a phase, ${values.rounds} rounds in alternating order, medians of the rounds) ` +
        `while ${LOOPS} loops replay from the resume point (rare: \`?types=${RARE_TYPE}\`; all: every type) until caught up, then close and start again, ` +
        `${PER_MINUTE > 0 ? `each user's within ${PER_MINUTE} replays a minute (the default rate limit)` : "as fast as they go"}; one: the four loops are one API user's; four: one user each. Caught up: replays finished, all rounds (429s); their median time and events received; ` +
        `events/s: read by each loop. CPU: seconds per second of the service's process and of its PostgreSQL backends.`,
      "",
      "| phase | req/s | p50 ms | p99 ms | p99 / quiet | caught up | catch-up ms | events | events/s a loop | service CPU | DB CPU | failed reads |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...table,
      "<!-- bench/replay.ts: end -->",
    ].join("\n");
    console.log(section);
    const out = path.resolve(import.meta.dirname, "..", values.out);
    const current = existsSync(out) ? readFileSync(out, "utf8") : "";
    const marked = /<!-- bench\/replay\.ts: start -->[\s\S]*<!-- bench\/replay\.ts: end -->/;
    writeFileSync(out, marked.test(current) ? current.replace(marked, section) : `${current.trimEnd()}\n\n${section}\n`);
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
