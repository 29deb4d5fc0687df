/**
 * The three measures of bench/events.ts: write → event latency across instances, the writes' latency and
 * cost with and without a fan-out of streams, and the RSS of idle streams.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type http from "node:http";
import { openMany, openStream, readers } from "./events-streams.js";
import { cpuSeconds, machineCpuSeconds, rssMb } from "./proc.js";

/** Streams one API user may hold (the largest EVENTS_STREAMS_PER_USER). */
export const PER_USER = 1_000;
/** The monitor's sampling interval (perf_hooks' default), which every sample includes. */
const LOOP_RESOLUTION_MS = 10;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An instance of the service: its process and its URL. */
export interface Instance {
  child: ChildProcess;
  url: string;
}

/** Reward logs written through one instance, each with the next reward id. */
export class Writes {
  next = 1;

  constructor(
    private readonly url: string,
    private readonly apiKey: string,
    private readonly playerId: number,
  ) {}

  /** One write; unless `failures` counts them, anything but a 201 stops the run (a failure's time is until it failed). */
  async write(failures?: { count: number }): Promise<{ rewardId: number; sent: number; answered: number }> {
    const rewardId = this.next++;
    const sent = performance.now();
    try {
      const res = await fetch(`${this.url}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": this.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ playerId: this.playerId, rewardId }),
      });
      if (res.status !== 201) throw new Error(`write answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    } catch (error) {
      if (!failures) throw error;
      failures.count++;
    }
    return { rewardId, sent, answered: performance.now() };
  }
}

/** Waits until `test` holds, at most `ms`; `received` says how many events came when it did not. */
async function until(test: () => boolean, ms: number, received: Map<number, number>): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`events did not all arrive in time (${received.size} received)`);
    await sleep(5);
  }
}

/**
 * 1. Write → event on the other instance: `count` writes one at a time, 20 ms apart, after a warm-up;
 * `received` is filled by a stream of the other instance (reward id → arrival). Sorted, in ms.
 */
export async function writeToEvent(writes: Writes, received: Map<number, number>, count: number): Promise<number[]> {
  // Warm-up first: connections, JIT.
  const warm: { rewardId: number }[] = [];
  for (let i = 0; i < 50; i++) warm.push(await writes.write());
  await until(() => warm.every((w) => received.has(w.rewardId)), 30_000, received);
  const samples: { rewardId: number; answered: number }[] = [];
  for (let i = 0; i < count; i++) {
    samples.push(await writes.write());
    await sleep(20);
  }
  await until(() => samples.every((s) => received.has(s.rewardId)), 60_000, received);
  return samples.map((s) => received.get(s.rewardId)! - s.answered).sort((x, y) => x - y);
}

/** One round: its writes' latencies sorted, the writing instance's CPU per write (µs), and with streams, write → event. */
export interface Round {
  latencies: number[];
  cpuPerWrite: number;
  /** The writing instance's event-loop delay over the round (ms). */
  loop: { p50: number; p99: number; max: number };
  /** Per write: the whole machine's busy CPU (µs, every core), and the fan-out readers' (µs). */
  machinePerWrite: number;
  readersPerWrite: number;
  toEvent?: number[];
}

export interface Fanout {
  roundsWithout: Round[];
  roundsWith: Round[];
  /** Writes not answered 201, without and with the streams. */
  failed: { without: { count: number }; with: { count: number } };
  /** What the fan-out's readers received, and how many streams the service cut off. */
  fanoutBytes: number;
  cutOff: number;
  /** The writing instance's RSS over the first round with the streams. */
  fanoutRss: { before: number; after: number };
  /** Every round's latencies, sorted: without the streams, with them, and with them the write's 201 → its event. */
  without: number[];
  withStreams: number[];
  toEvent: number[];
}

/** The writing instance's event-loop delay since the last call (ms beyond the sampling interval), told in `file` (bench/loop-delay.mjs). */
async function loopDelay(pid: number, file: string): Promise<{ p50: number; p99: number; max: number }> {
  const before = existsSync(file) ? readFileSync(file, "utf8") : "";
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    const now = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (now && now !== before) {
      const d = JSON.parse(now) as { p50: number; p99: number; max: number };
      const less = (ms: number) => Math.max(0, ms - LOOP_RESOLUTION_MS);
      return { p50: less(d.p50), p99: less(d.p99), max: less(d.max) };
    }
    await sleep(5);
  }
  throw new Error("the writing instance did not tell its event-loop delay");
}

/**
 * 2. Write latency at a steady `rate` for `seconds`, `rounds` rounds each way alternating: without, then
 * with `fanout` streams of `fanoutKey` on the writing instance `a` (whose loop delay goes to `loopDelayFile`).
 */
export async function fanoutRounds(
  a: Instance,
  keys: { apiKey: string; fanoutKey: string },
  agent: http.Agent,
  writes: Writes,
  o: { rate: number; seconds: number; rounds: number; fanout: number; loopDelayFile: string },
): Promise<Fanout> {
  const { rate, seconds, rounds, fanout } = o;
  const failed = { without: { count: 0 }, with: { count: 0 } };
  const without: number[] = [];
  const withStreams: number[] = [];
  const roundsWithout: Round[] = [];
  const roundsWith: Round[] = [];
  let fanoutBytes = 0;
  let cutOff = 0;
  let fanoutRss = { before: 0, after: 0 };
  // The write's 201 → its event on one more stream of the writing instance, while the fan-out's streams are open.
  const seen = new Map<number, number>();
  const observe = () =>
    openStream(a.url, keys.apiKey, agent, (data, at) => {
      const rewardId = (JSON.parse(data) as { data: { rewardId: number } }).data.rewardId;
      if (!seen.has(rewardId)) seen.set(rewardId, at);
    });
  const timed = async (failures: { count: number }, readerPids: number[]): Promise<Round> => {
    const withFanout = readerPids.length > 0;
    await loopDelay(a.child.pid!, o.loopDelayFile);
    const start = cpuSeconds(a.child.pid!);
    const machineStart = machineCpuSeconds();
    const readersStart = readerPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const firstId = writes.next;
    const pending: Promise<{ rewardId: number; sent: number; answered: number }>[] = [];
    const begun = performance.now();
    for (let i = 0; i < rate * seconds; i++) {
      const wait = begun + (i * 1_000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(writes.write(failures));
    }
    const done = await Promise.all(pending);
    const perWrite = (s: number) => (s * 1e6) / done.length;
    const cpuPerWrite = perWrite(cpuSeconds(a.child.pid!) - start);
    const machinePerWrite = perWrite(machineCpuSeconds() - machineStart);
    const readersPerWrite = perWrite(readerPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - readersStart);
    const loop = await loopDelay(a.child.pid!, o.loopDelayFile);
    const latencies = done.map((w) => w.answered - w.sent).sort((x, y) => x - y);
    if (!withFanout) return { latencies, cpuPerWrite, loop, machinePerWrite, readersPerWrite };
    await sleep(500);
    const toEvent = done.filter((w) => w.rewardId >= firstId && seen.has(w.rewardId)).map((w) => seen.get(w.rewardId)! - w.answered);
    return { latencies, cpuPerWrite, loop, machinePerWrite, readersPerWrite, toEvent: toEvent.sort((x, y) => x - y) };
  };
  for (let i = 0; i < rounds; i++) {
    roundsWithout.push(await timed(failed.without, []));
    const before = rssMb(a.child.pid!, "VmRSS");
    // The parsing stream opened between two halves of the fan-out's: the hub writes to its streams in the
    // order they opened, so that it sees what the median stream sees (opened last, it saw the whole fan-out).
    const firstHalf = await readers(a.url, keys.fanoutKey, Math.floor(fanout / 2));
    const observer = await observe();
    const secondHalf = await readers(a.url, keys.fanoutKey, fanout - Math.floor(fanout / 2));
    await sleep(1_000);
    roundsWith.push(await timed(failed.with, [firstHalf.pid, secondHalf.pid]));
    observer.destroy();
    if (i === 0) fanoutRss = { before, after: rssMb(a.child.pid!, "VmRSS") };
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
  return { roundsWithout, roundsWith, failed, fanoutBytes, cutOff, fanoutRss, without, withStreams, toEvent };
}

/** 3. `idle` streams opened on instance `b`, a thousand at a time (one key per thousand), kept in `streams`: its RSS (MB) before and after each thousand. */
export async function idleStreams(b: Instance, idleKeys: string[], idle: number, agent: http.Agent, streams: http.ClientRequest[]): Promise<number[]> {
  const idleRss = [rssMb(b.child.pid!, "VmRSS")];
  for (let i = 0; i < idle; i += PER_USER) {
    streams.push(...(await openMany(b.url, idleKeys[i / PER_USER]!, Math.min(PER_USER, idle - i), agent)));
    await sleep(2_000);
    idleRss.push(rssMb(b.child.pid!, "VmRSS"));
  }
  return idleRss;
}
