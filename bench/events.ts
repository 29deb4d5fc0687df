// The event stream (GET /api/events), measured: latency from a write's answer on one instance to its
// event on a stream of another, what fan-out to many streams costs the writes, and what idle streams cost.
//   npx tsx bench/events.ts [--latency 300] [--fanout 1000] [--rate 100] [--seconds 10] [--rounds 6] [--idle 5000] [--production]
// Creates a database on the PostgreSQL server of DATABASE_URL (default: the local one) and starts two
// instances of the service (src/main.ts, with the memory flags of `npm start`) sharing it; limits off and logs at warn, or with --production as operators run it (request log at info, metrics, limits in Redis).
// 1. Latency: a stream (reward_log.created) on the second; `--latency` reward logs written through the
//    first, one at a time, 20 ms apart: for each, the time its event arrived minus the time its 201 arrived.
// 2. Fan-out: reward logs written through the first instance at a steady `--rate` per second (sent on a
//    schedule, not one after the other), `--seconds` per round, `--rounds` rounds each way alternating: no
//    stream, then `--fanout` streams of that type open on the same instance. Per round: the write latency
//    (request sent → 201) and the writing instance's CPU per write; with the streams, also the write's 201 →
//    its event on one more stream of that instance (one that parses what comes, opened between two halves
//    of the fan-out's streams: the hub writes to them in the order they opened). Also per round: the writing
//    instance's event-loop delay (bench/loop-delay.mjs, preloaded), the machine's busy CPU and the readers'.
//    The medians of the rounds without streams against those with them: one round's outliers (the machine
//    is shared) do not decide.
// 3. Idle streams: `--idle` streams opened on the second instance, 1,000 at a time (one API user per
//    1,000: EVENTS_STREAMS_PER_USER is 1,000 at most), its RSS (Linux /proc) after each thousand.
// Each stream is a connection of its own: the process raises its open-file limit (and its instances')
// to what that needs, up to the hard limit, by starting itself again under `ulimit -n`.
// Writes the section between its markers in bench/results.md. Load goes to 127.0.0.1 only.
// This file is the driver (options, the database, the instances, the run order, writing the section):
// the streams are in events-streams.ts, the three measures in events-measures.ts, the section in events-report.ts.
import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { ApiUsers } from "../src/users/users.js";
import { fanoutRounds, idleStreams, PER_USER, Writes, writeToEvent } from "./events-measures.js";
import { eventsSection, SECTION } from "./events-report.js";
import { openStream } from "./events-streams.js";
import { loadAverage } from "./proc.js";
import { dropRedisKeys, productionSettings, scratchDatabase, startService as startServiceOn } from "./service.js";

const { values } = parseArgs({
  options: {
    latency: { type: "string", default: "300" },
    fanout: { type: "string", default: "1000" },
    rate: { type: "string", default: "100" },
    seconds: { type: "string", default: "10" },
    rounds: { type: "string", default: "6" },
    idle: { type: "string", default: "5000" },
    production: { type: "boolean", default: false },
    out: { type: "string", default: "bench/results.md" },
  },
});
const idle = Number(values.idle);
const fanout = Number(values.fanout);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

// Every stream is a socket on both sides: the client (this process) and the server hold one file each.
const NOFILE_RAISED = "BENCH_EVENTS_NOFILE_RAISED";
const needed = Math.max(idle, fanout) + 1_000;
const [soft, hard] = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/
  .exec(readFileSync("/proc/self/limits", "utf8"))!
  .slice(1)
  .map((n) => (n === "unlimited" ? Infinity : Number(n))) as [number, number];
if (soft < needed) {
  if (hard < needed || process.env[NOFILE_RAISED]) throw new Error(`${needed} open files needed, the hard limit is ${hard}: lower --idle/--fanout`);
  const again = spawnSync("/bin/sh", ["-c", `ulimit -n ${needed} && exec "$@"`, "sh", process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [NOFILE_RAISED]: "1" },
  });
  process.exit(again.status ?? 1);
}

const root = path.resolve(import.meta.dirname, "..");
const scratch = scratchDatabase("bench_events");
const dbUrl = scratch.url;
const idleUsers = Array.from({ length: Math.ceil(idle / PER_USER) }, (_, i) => `bench-idle-${i + 1}`);
const fanoutUser = "bench-fanout";

// The stream users may see reward logs: they are callers of create-reward-log (group A, with user-A).
// --production: as operators run it (request log at info, metrics served, both limits counted in Redis, never reached).
const redisPrefix = `bench_events_${process.pid}:`;
const PRODUCTION: Record<string, string> = values.production ? productionSettings(redisPrefix) : {};
const startService = (env: Record<string, string> = {}) =>
  startServiceOn(dbUrl, { EVENTS_STREAMS_PER_USER: String(PER_USER), CALLERS_USER_A: ["user-A", fanoutUser, ...idleUsers].join(","), ...PRODUCTION, ...env });
/** Where the writing instance tells its event loop's delay (bench/loop-delay.mjs). */
const loopDelayFile = path.join(os.tmpdir(), `bench-events-loop-${process.pid}.json`);

async function main(): Promise<void> {
  await scratch.create();
  const services: ChildProcess[] = [];
  const streams: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const db = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 2 });
  try {
    await migrate(db, createLogger("silent"));
    const users = new ApiUsers(db.prisma);
    const { apiKey } = await users.create("user-B");
    const { apiKey: fanoutKey } = await users.create(fanoutUser);
    const idleKeys: string[] = [];
    for (const name of idleUsers) idleKeys.push((await users.create(name)).apiKey);
    const player = await db.prisma.player.create({
      data: { pseudo: "bench", token: "t", ip: "203.0.113.1", firstConnection: new Date(), totalTimeConnection: 0 },
    });
    const a = await startService({
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${path.join(root, "bench/loop-delay.mjs")}`.trim(),
      BENCH_LOOP_DELAY_FILE: loopDelayFile,
    });
    const b = await startService();
    services.push(a.child, b.child);
    const loadAtStart = loadAverage();
    const received = new Map<number, number>();
    streams.push(
      await openStream(b.url, apiKey, agent, (data, at) => {
        const rewardId = (JSON.parse(data) as { data: { rewardId: number } }).data.rewardId;
        if (!received.has(rewardId)) received.set(rewardId, at);
      }),
    );
    const writes = new Writes(a.url, apiKey, player.id);

    // 1. Write → event on the other instance.
    const latency = await writeToEvent(writes, received, Number(values.latency));
    // 2. Write latency at a steady rate, without and with `fanout` streams on the writing instance.
    const fan = await fanoutRounds(a, { apiKey, fanoutKey }, agent, writes, { rate, seconds, rounds, fanout, loopDelayFile });
    // 3. Idle streams on the second instance, a thousand at a time.
    const idleRss = await idleStreams(b, idleKeys, idle, agent, streams);

    const section = eventsSection(
      { latencyWrites: values.latency, fanout, rate, seconds, rounds, idle, production: values.production, loadAtStart, latency, idleRss },
      fan,
    );
    console.log(section);
    const out = path.join(root, values.out);
    const current = existsSync(out) ? readFileSync(out, "utf8") : "";
    writeFileSync(
      out,
      SECTION.test(current)
        ? current.replace(SECTION, section)
        : `${current.trimEnd()}

${section}
`,
    );
  } finally {
    for (const s of streams) s.destroy();
    for (const child of services) child.kill("SIGTERM");
    await Promise.all(services.map((child) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)))));
    await db.close();
    await scratch.drop();
    if (values.production) await dropRedisKeys(redisPrefix);
    rmSync(loopDelayFile, { force: true });
  }
}

await main();
