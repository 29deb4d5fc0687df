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
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { dropRedisKeys, productionSettings, scratchDatabase, startService as startServiceOn } from "./service.js";
import { openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { createLogger } from "../src/core/logger.js";
import { ApiUsers } from "../src/users/users.js";

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
/** Streams one API user may hold (the largest EVENTS_STREAMS_PER_USER). */
const PER_USER = 1_000;

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
/** The monitor's sampling interval (perf_hooks' default), which every sample includes. */
const LOOP_RESOLUTION_MS = 10;

const median = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number) => (n < 10 ? n.toFixed(1) : String(Math.round(n)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(", ");

/** CPU seconds (user + system) a process has used (Linux /proc; clock ticks of 1/100 s). */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** The whole machine's busy CPU seconds (every core; /proc/stat: all but idle and iowait). */
const machineCpuSeconds = () => {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (fields.reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!) / 100;
};
/** The writing instance's event-loop delay since the last call (ms beyond the sampling interval). */
async function loopDelay(pid: number): Promise<{ p50: number; p99: number; max: number }> {
  const before = existsSync(loopDelayFile) ? readFileSync(loopDelayFile, "utf8") : "";
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    const now = existsSync(loopDelayFile) ? readFileSync(loopDelayFile, "utf8") : "";
    if (now && now !== before) {
      const d = JSON.parse(now) as { p50: number; p99: number; max: number };
      const less = (ms: number) => Math.max(0, ms - LOOP_RESOLUTION_MS);
      return { p50: less(d.p50), p99: less(d.p99), max: less(d.max) };
    }
    await sleep(5);
  }
  throw new Error("the writing instance did not tell its event-loop delay");
}
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/**
 * Opens a stream; resolves once the head came. With `onEvent`, calls it with each event's data and its
 * arrival time; without, reads and drops what comes (idle streams).
 */
function openStream(
  url: string,
  key: string,
  agent: http.Agent,
  onEvent?: (data: string, at: number) => void,
): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events?types=reward_log.created`, { headers: { "X-API-Key": key }, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      if (!onEvent) {
        res.resume();
        resolve(req);
        return;
      }
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
          if (data !== undefined) onEvent(data, at);
        }
      });
      resolve(req);
    });
    req.on("error", reject);
  });
}

/** `count` streams of one key, 50 connecting at a time. */
async function openMany(url: string, key: string, count: number, agent: http.Agent): Promise<http.ClientRequest[]> {
  const opened: http.ClientRequest[] = [];
  for (let i = 0; i < count; i += 50) {
    opened.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => openStream(url, key, agent)))));
  }
  return opened;
}

/**
 * The fan-out's readers: a process of their own at the lowest priority (so that reading 1,000 streams
 * neither slows this process's timing of the writes nor takes the instances' CPU first), raw sockets
 * counting bytes. Resolves once every stream answered 200; `stop()` closes them and tells what came.
 */
const READERS = `
const net = require("node:net");
const [url, key, count] = process.argv.slice(1);
const { hostname, port } = new URL(url);
const buffer = Buffer.alloc(65536);
let bytes = 0, closed = 0, opened = 0;
const sockets = [];
const open = () => new Promise((resolve, reject) => {
  let first = true;
  const socket = net.connect({ host: hostname, port: Number(port), onread: { buffer, callback: (n) => {
    bytes += n;
    if (first) {
      first = false;
      if (buffer.toString("latin1", 0, 12) !== "HTTP/1.1 200") reject(new Error("stream answered " + buffer.toString("latin1", 0, 12)));
      else resolve();
    }
  } } });
  socket.on("error", reject);
  socket.on("close", () => closed++);
  socket.write("GET /api/events?types=reward_log.created HTTP/1.1\\r\\nHost: bench\\r\\nX-API-Key: " + key + "\\r\\n\\r\\n");
  sockets.push(socket);
});
(async () => {
  for (let i = 0; i < Number(count); i += 50) await Promise.all(Array.from({ length: Math.min(50, Number(count) - i) }, open));
  opened = sockets.length;
  process.send({ opened });
})().catch((error) => { console.error(error); process.exit(1); });
process.on("message", () => {
  const open = sockets.length - closed;
  for (const s of sockets) s.destroy();
  process.send({ bytes, cutOff: opened - open }, () => process.exit(0));
});
`;

async function readers(url: string, key: string, count: number): Promise<{ pid: number; stop(): Promise<{ bytes: number; cutOff: number }> }> {
  const child = spawn(process.execPath, ["-e", READERS, url, key, String(count)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  os.setPriority(child.pid!, 19);
  const next = () =>
    new Promise<Record<string, number>>((resolve, reject) => {
      child.once("message", (m) => resolve(m as Record<string, number>));
      child.once("exit", (code) => reject(new Error(`stream readers exited with ${code}`)));
    });
  await next();
  return {
    pid: child.pid!,
    async stop() {
      const report = next();
      child.send("stop");
      const { bytes, cutOff } = await report;
      return { bytes: bytes!, cutOff: cutOff! };
    },
  };
}

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
    let next = 1;
    /** One write; unless `failures` counts them, anything but a 201 stops the run (a failure's time is until it failed). */
    const write = async (failures?: { count: number }) => {
      const rewardId = next++;
      const sent = performance.now();
      try {
        const res = await fetch(`${a.url}/api/website/create-reward-log`, {
          method: "POST",
          headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
          body: JSON.stringify({ playerId: player.id, rewardId }),
        });
        if (res.status !== 201) throw new Error(`write answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      } catch (error) {
        if (!failures) throw error;
        failures.count++;
      }
      return { rewardId, sent, answered: performance.now() };
    };
    const until = async (test: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!test()) {
        if (Date.now() > end) throw new Error(`events did not all arrive in time (${received.size} received)`);
        await sleep(5);
      }
    };

    // 1. Write → event on the other instance. Warm-up first: connections, JIT.
    const warm: { rewardId: number }[] = [];
    for (let i = 0; i < 50; i++) warm.push(await write());
    await until(() => warm.every((w) => received.has(w.rewardId)), 30_000);
    const samples: { rewardId: number; answered: number }[] = [];
    for (let i = 0; i < Number(values.latency); i++) {
      samples.push(await write());
      await sleep(20);
    }
    await until(() => samples.every((s) => received.has(s.rewardId)), 60_000);
    const latency = samples.map((s) => received.get(s.rewardId)! - s.answered).sort((x, y) => x - y);

    // 2. Write latency at a steady rate, without and with `fanout` streams on the writing instance.
    const failed = { without: { count: 0 }, with: { count: 0 } };
    const without: number[] = [];
    const withStreams: number[] = [];
    /** One round: its writes' latencies sorted, the writing instance's CPU per write (µs), and with streams, write → event. */
    interface Round {
      latencies: number[];
      cpuPerWrite: number;
      /** The writing instance's event-loop delay over the round (ms). */
      loop: { p50: number; p99: number; max: number };
      /** Per write: the whole machine's busy CPU (µs, every core), and the fan-out readers' (µs). */
      machinePerWrite: number;
      readersPerWrite: number;
      toEvent?: number[];
    }
    const roundsWithout: Round[] = [];
    const roundsWith: Round[] = [];
    let fanoutBytes = 0;
    let cutOff = 0;
    let fanoutRss = { before: 0, after: 0 };
    // The write's 201 → its event on one more stream of the writing instance, while the fan-out's streams are open.
    const seen = new Map<number, number>();
    const observe = () =>
      openStream(a.url, apiKey, agent, (data, at) => {
        const rewardId = (JSON.parse(data) as { data: { rewardId: number } }).data.rewardId;
        if (!seen.has(rewardId)) seen.set(rewardId, at);
      });
    const timed = async (failures: { count: number }, readerPids: number[]): Promise<Round> => {
      const withFanout = readerPids.length > 0;
      await loopDelay(a.child.pid!);
      const start = cpuSeconds(a.child.pid!);
      const machineStart = machineCpuSeconds();
      const readersStart = readerPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      const firstId = next;
      const pending: Promise<{ rewardId: number; sent: number; answered: number }>[] = [];
      const begun = performance.now();
      for (let i = 0; i < rate * seconds; i++) {
        const wait = begun + (i * 1_000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        pending.push(write(failures));
      }
      const writes = await Promise.all(pending);
      const perWrite = (s: number) => (s * 1e6) / writes.length;
      const cpuPerWrite = perWrite(cpuSeconds(a.child.pid!) - start);
      const machinePerWrite = perWrite(machineCpuSeconds() - machineStart);
      const readersPerWrite = perWrite(readerPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - readersStart);
      const loop = await loopDelay(a.child.pid!);
      const latencies = writes.map((w) => w.answered - w.sent).sort((x, y) => x - y);
      if (!withFanout) return { latencies, cpuPerWrite, loop, machinePerWrite, readersPerWrite };
      await sleep(500);
      const toEvent = writes.filter((w) => w.rewardId >= firstId && seen.has(w.rewardId)).map((w) => seen.get(w.rewardId)! - w.answered);
      return { latencies, cpuPerWrite, loop, machinePerWrite, readersPerWrite, toEvent: toEvent.sort((x, y) => x - y) };
    };
    for (let i = 0; i < rounds; i++) {
      roundsWithout.push(await timed(failed.without, []));
      const before = rssMb(a.child.pid!);
      // The parsing stream opened between two halves of the fan-out's: the hub writes to its streams in the
      // order they opened, so that it sees what the median stream sees (opened last, it saw the whole fan-out).
      const firstHalf = await readers(a.url, fanoutKey, Math.floor(fanout / 2));
      const observer = await observe();
      const secondHalf = await readers(a.url, fanoutKey, fanout - Math.floor(fanout / 2));
      await sleep(1_000);
      roundsWith.push(await timed(failed.with, [firstHalf.pid, secondHalf.pid]));
      observer.destroy();
      if (i === 0) fanoutRss = { before, after: rssMb(a.child.pid!) };
      for (const half of [firstHalf, secondHalf]) {
        const got = await half.stop();
        fanoutBytes += got.bytes;
        cutOff += got.cutOff;
      }
      await sleep(1_000);
    }
    for (const r of roundsWithout) without.push(...r.latencies);
    for (const r of roundsWith) withStreams.push(...r.latencies);
    without.sort((x, y) => x - y);
    withStreams.sort((x, y) => x - y);
    const toEvent = roundsWith.flatMap((r) => r.toEvent!).sort((x, y) => x - y);

    // 3. Idle streams on the second instance, a thousand at a time.
    const idleRss = [rssMb(b.child.pid!)];
    for (let i = 0; i < idle; i += PER_USER) {
      streams.push(...(await openMany(b.url, idleKeys[i / PER_USER]!, Math.min(PER_USER, idle - i), agent)));
      await sleep(2_000);
      idleRss.push(rssMb(b.child.pid!));
    }
    const idleAdded = idleRss.at(-1)! - idleRss[0]!;

    const row = (name: string, xs: number[]) => `| ${name} | ${round(percentile(xs, 50))} | ${round(percentile(xs, 99))} | ${round(xs.at(-1)!)} |`;
    const medianOf = (rs: Round[], p: number) => median(rs.map((r) => percentile(r.latencies, p)));
    const rise = (p: number) => `${Math.round((medianOf(roundsWith, p) / medianOf(roundsWithout, p) - 1) * 100)} %`;
    const cpuWithout = median(roundsWithout.map((r) => r.cpuPerWrite));
    const cpuWith = median(roundsWith.map((r) => r.cpuPerWrite));
    const perRound = roundsWithout.map((r, i) => {
      const w = roundsWith[i]!;
      const ms = (xs: number[], p: number) => round(percentile(xs, p));
      const loop = (x: Round) => `${round(x.loop.p50)} / ${round(x.loop.p99)} / ${round(x.loop.max)}`;
      return (
        `| ${i + 1} | ${ms(r.latencies, 50)} / ${ms(r.latencies, 99)} | ${Math.round(r.cpuPerWrite)} | ${loop(r)} | ${Math.round(r.machinePerWrite)} ` +
        `| ${ms(w.latencies, 50)} / ${ms(w.latencies, 99)} | ${Math.round(w.cpuPerWrite)} | ${loop(w)} | ${Math.round(w.machinePerWrite)} | ${Math.round(w.readersPerWrite)} ` +
        `| ${w.toEvent!.length ? `${ms(w.toEvent!, 50)} / ${ms(w.toEvent!, 99)}` : "none"} |`
      );
    });
    const med = (rs: Round[], f: (r: Round) => number) => median(rs.map(f));
    const section = [
      "<!-- bench/events.ts: start -->",
      "## Event stream",
      "",
      `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/events.ts --latency ${values.latency} --fanout ${fanout} --rate ${rate} --seconds ${seconds} --rounds ${rounds} --idle ${idle}\`): ` +
        `two instances of the service (with \`npm start\`'s memory flags; ${values.production ? "production settings: request log at info, metrics served, limits counted in Redis" : "limits off, logs at warn, no metrics"}) on one PostgreSQL, all on this machine ` +
        `(${os.cpus().length} cores, shared); Node ${process.version}; load average ${loadAtStart} at the start, ${loadAverage()} at the end.`,
      "",
      "| measure | p50 ms | p99 ms | max ms |",
      "|---|---|---|---|",
      row("one write at a time: its event on the other instance − the write's 201", latency),
      row(`${rate} writes/s through one instance, no stream open: request → 201`, without),
      row(`the same with ${fanout} streams of reward_log.created open on that instance`, withStreams),
      row(`the same: the write's 201 → its event on one more stream of that instance (the middle one of the fan-out's order)`, toEvent),
      "",
      `Round by round (${seconds} s each, alternating; p50 / p99 in ms; CPU: the writing instance's own process, utime + stime, per write; ` +
        `loop: its event loop's delay, p50 / p99 / max ms (perf_hooks, beyond the 10 ms sampling); machine: every core's busy time per write, ` +
        `whatever ran (other sessions too); readers: the fan-out's reading processes; 201 → event on the parsing stream, opened in the middle of the fan-out's order):`,
      "",
      `| round | no stream: request → 201 | CPU µs | loop ms | machine µs | ${fanout} streams: request → 201 | CPU µs | loop ms | machine µs | readers µs | 201 → event |`,
      "|---|---|---|---|---|---|---|---|---|---|---|",
      ...perRound,
      `| median | ${round(medianOf(roundsWithout, 50))} / ${round(medianOf(roundsWithout, 99))} | ${Math.round(cpuWithout)} ` +
        `| ${round(med(roundsWithout, (r) => r.loop.p50))} / ${round(med(roundsWithout, (r) => r.loop.p99))} / ${round(med(roundsWithout, (r) => r.loop.max))} ` +
        `| ${Math.round(med(roundsWithout, (r) => r.machinePerWrite))} | ${round(medianOf(roundsWith, 50))} / ${round(medianOf(roundsWith, 99))} | ${Math.round(cpuWith)} ` +
        `| ${round(med(roundsWith, (r) => r.loop.p50))} / ${round(med(roundsWith, (r) => r.loop.p99))} / ${round(med(roundsWith, (r) => r.loop.max))} ` +
        `| ${Math.round(med(roundsWith, (r) => r.machinePerWrite))} | ${Math.round(med(roundsWith, (r) => r.readersPerWrite))} | |`,
      "",
      `With ${fanout} streams, the median round's p50 rose ${rise(50)} and its p99 ${rise(99)} (${rounds * rate * seconds} writes each way; not answered 201: ` +
        `${failed.without.count} without streams, ${failed.with.count} with them); the streams' readers (another process, at the lowest priority) took ${Math.round(fanoutBytes / 1_048_576)} MB` +
        `${cutOff > 0 ? `, ${cutOff} were cut off as slow readers` : ", none cut off as a slow reader"}; the writing instance's CPU per write (median round): ` +
        `${Math.round(cpuWithout)} µs without streams, ${Math.round(cpuWith)} µs with them (the fan-out's share: ` +
        `${Math.round(((cpuWith - cpuWithout) / fanout) * 100) / 100} µs per event and stream); its RSS ` +
        `went ${Math.round(fanoutRss.before)} → ${Math.round(fanoutRss.after)} MB over the first round with them.`,
      "",
      `${idle} idle streams on the second instance: RSS ${idleRss.map((r) => Math.round(r)).join(" → ")} MB, one step per ${PER_USER} streams ` +
        `(+${Math.round(idleAdded)} MB, ${idle > 0 ? round((idleAdded * 1024) / idle) : 0} KB a stream).`,
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
    if (values.production) await dropRedisKeys(redisPrefix);
    rmSync(loopDelayFile, { force: true });
  }
}

await main();
