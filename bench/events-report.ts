/**
 * The section bench/events.ts writes in bench/results.md: the latencies, the fan-out's rounds and their
 * medians, and the idle streams' RSS.
 */
import os from "node:os";
import { type Fanout, PER_USER, type Round } from "./events-measures.js";
import { loadAverage } from "./proc.js";
import { median, percentile, round } from "./stats.js";

export const SECTION = /<!-- bench\/events\.ts: start -->[\s\S]*<!-- bench\/events\.ts: end -->/;

export interface EventsRun {
  /** The options of the run. */
  latencyWrites: string;
  fanout: number;
  rate: number;
  seconds: number;
  rounds: number;
  idle: number;
  production: boolean;
  loadAtStart: string;
  /** Write → event on the other instance, sorted (ms). */
  latency: number[];
  /** The second instance's RSS before and after each thousand idle streams (MB). */
  idleRss: number[];
}

/** The section, markers included. */
export function eventsSection(run: EventsRun, fan: Fanout): string {
  const idleAdded = run.idleRss.at(-1)! - run.idleRss[0]!;
  const row = (name: string, xs: number[]) => `| ${name} | ${round(percentile(xs, 50))} | ${round(percentile(xs, 99))} | ${round(xs.at(-1)!)} |`;
  const medianOf = (rs: Round[], p: number) => median(rs.map((r) => percentile(r.latencies, p)));
  const rise = (p: number) => `${Math.round((medianOf(fan.roundsWith, p) / medianOf(fan.roundsWithout, p) - 1) * 100)} %`;
  const cpuWithout = median(fan.roundsWithout.map((r) => r.cpuPerWrite));
  const cpuWith = median(fan.roundsWith.map((r) => r.cpuPerWrite));
  const perRound = fan.roundsWithout.map((r, i) => {
    const w = fan.roundsWith[i]!;
    const ms = (xs: number[], p: number) => round(percentile(xs, p));
    const loop = (x: Round) => `${round(x.loop.p50)} / ${round(x.loop.p99)} / ${round(x.loop.max)}`;
    return (
      `| ${i + 1} | ${ms(r.latencies, 50)} / ${ms(r.latencies, 99)} | ${Math.round(r.cpuPerWrite)} | ${loop(r)} | ${Math.round(r.machinePerWrite)} ` +
      `| ${ms(w.latencies, 50)} / ${ms(w.latencies, 99)} | ${Math.round(w.cpuPerWrite)} | ${loop(w)} | ${Math.round(w.machinePerWrite)} | ${Math.round(w.readersPerWrite)} ` +
      `| ${w.toEvent!.length ? `${ms(w.toEvent!, 50)} / ${ms(w.toEvent!, 99)}` : "none"} |`
    );
  });
  const med = (rs: Round[], of: (r: Round) => number) => median(rs.map(of));
  return [
    "<!-- bench/events.ts: start -->",
    "## Event stream",
    "",
    `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/events.ts --latency ${run.latencyWrites} --fanout ${run.fanout} --rate ${run.rate} --seconds ${run.seconds} --rounds ${run.rounds} --idle ${run.idle}\`): ` +
      `two instances of the service (with \`npm start\`'s memory flags; ${run.production ? "production settings: request log at info, metrics served, limits counted in Redis" : "limits off, logs at warn, no metrics"}) on one PostgreSQL, all on this machine ` +
      `(${os.cpus().length} cores, shared); Node ${process.version}; load average ${run.loadAtStart} at the start, ${loadAverage()} at the end.`,
    "",
    "| measure | p50 ms | p99 ms | max ms |",
    "|---|---|---|---|",
    row("one write at a time: its event on the other instance − the write's 201", run.latency),
    row(`${run.rate} writes/s through one instance, no stream open: request → 201`, fan.without),
    row(`the same with ${run.fanout} streams of reward_log.created open on that instance`, fan.withStreams),
    row(`the same: the write's 201 → its event on one more stream of that instance (the middle one of the fan-out's order)`, fan.toEvent),
    "",
    `Round by round (${run.seconds} s each, alternating; p50 / p99 in ms; CPU: the writing instance's own process, utime + stime, per write; ` +
      `loop: its event loop's delay, p50 / p99 / max ms (perf_hooks, beyond the 10 ms sampling); machine: every core's busy time per write, ` +
      `whatever ran (other sessions too); readers: the fan-out's reading processes; 201 → event on the parsing stream, opened in the middle of the fan-out's order):`,
    "",
    `| round | no stream: request → 201 | CPU µs | loop ms | machine µs | ${run.fanout} streams: request → 201 | CPU µs | loop ms | machine µs | readers µs | 201 → event |`,
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...perRound,
    `| median | ${round(medianOf(fan.roundsWithout, 50))} / ${round(medianOf(fan.roundsWithout, 99))} | ${Math.round(cpuWithout)} ` +
      `| ${round(med(fan.roundsWithout, (r) => r.loop.p50))} / ${round(med(fan.roundsWithout, (r) => r.loop.p99))} / ${round(med(fan.roundsWithout, (r) => r.loop.max))} ` +
      `| ${Math.round(med(fan.roundsWithout, (r) => r.machinePerWrite))} | ${round(medianOf(fan.roundsWith, 50))} / ${round(medianOf(fan.roundsWith, 99))} | ${Math.round(cpuWith)} ` +
      `| ${round(med(fan.roundsWith, (r) => r.loop.p50))} / ${round(med(fan.roundsWith, (r) => r.loop.p99))} / ${round(med(fan.roundsWith, (r) => r.loop.max))} ` +
      `| ${Math.round(med(fan.roundsWith, (r) => r.machinePerWrite))} | ${Math.round(med(fan.roundsWith, (r) => r.readersPerWrite))} | |`,
    "",
    `With ${run.fanout} streams, the median round's p50 rose ${rise(50)} and its p99 ${rise(99)} (${run.rounds * run.rate * run.seconds} writes each way; not answered 201: ` +
      `${fan.failed.without.count} without streams, ${fan.failed.with.count} with them); the streams' readers (another process, at the lowest priority) took ${Math.round(fan.fanoutBytes / 1_048_576)} MB` +
      `${fan.cutOff > 0 ? `, ${fan.cutOff} were cut off as slow readers` : ", none cut off as a slow reader"}; the writing instance's CPU per write (median round): ` +
      `${Math.round(cpuWithout)} µs without streams, ${Math.round(cpuWith)} µs with them (the fan-out's share: ` +
      `${Math.round(((cpuWith - cpuWithout) / run.fanout) * 100) / 100} µs per event and stream); its RSS ` +
      `went ${Math.round(fan.fanoutRss.before)} → ${Math.round(fan.fanoutRss.after)} MB over the first round with them.`,
    "",
    `${run.idle} idle streams on the second instance: RSS ${run.idleRss.map((mb) => Math.round(mb)).join(" → ")} MB, one step per ${PER_USER} streams ` +
      `(+${Math.round(idleAdded)} MB, ${run.idle > 0 ? round((idleAdded * 1024) / run.idle) : 0} KB a stream).`,
    "<!-- bench/events.ts: end -->",
  ].join("\n");
}
