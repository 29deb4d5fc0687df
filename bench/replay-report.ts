/**
 * The section bench/replay.ts writes in bench/results.md: how the run was made, what replays alone took,
 * and per phase the other caller's reads, the replays, and the CPU of the service and its backends.
 */
import os from "node:os";
import { loadAverage } from "./proc.js";
import { RARE_TYPE, type Replay } from "./replay-events.js";

export const SECTION = /<!-- bench\/replay\.ts: start -->[\s\S]*<!-- bench\/replay\.ts: end -->/;

/** A phase's point reads (req/s, ms), the replays its loops made in `loopSeconds`, and CPU seconds per second. */
export type Phase = { rps: number; p50: number; p99: number; bad: number; replays: Replay[]; loopSeconds: number; serviceCpu: number; dbCpu: number };

/** The lower middle value; NaN for none. */
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]! : Number.NaN);
const fmt = (n: number) => (Number.isNaN(n) ? "–" : n < 10 ? n.toFixed(1) : String(Math.round(n)));

export interface ReplayRun {
  /** The options of the run. */
  events: number;
  rare: number;
  players: number;
  rounds: string;
  seconds: number;
  connections: string;
  users: string;
  read: string;
  production: boolean;
  perMinute: number;
  loops: number;
  /** The load generator's name, and the route it read. */
  tool: string;
  route: string;
  loadAtStart: string;
  /** Events in the outbox, and those after the resume point of the rare type. */
  outbox: number;
  rareCount: number;
  /** Replays alone on the quiet service; four at once, by variant (their times, ms). */
  aloneRuns: { rare: Replay[]; all: Replay[] };
  together: Map<string, number[]>;
  /** The phases in their order, and each one's figures, round by round. */
  plan: { name: string; kind?: string }[];
  results: Map<string, Phase[]>;
}

/** The section, markers included. */
export function replaySection(r: ReplayRun): string {
  const q99 = median(r.results.get("quiet")!.map((p) => p.p99));
  const table = r.plan.map(({ name, kind }) => {
    const ps = r.results.get(name)!;
    const of = (f: (p: Phase) => number) => fmt(median(ps.map(f)));
    const done = ps.flatMap((p) => p.replays.filter((x) => x.done));
    const refused = ps.reduce((s, p) => s + p.replays.filter((x) => x.refused !== undefined).length, 0);
    const loopsCell = kind
      ? `${done.length} (${refused} refused) | ${done.length ? fmt(median(done.map((x) => x.ms))) : "–"} | ${done.length ? Math.round(median(done.map((x) => x.events))) : "–"} ` +
        `| ${of((p) => p.replays.reduce((s, x) => s + x.events, 0) / p.loopSeconds / r.loops)}`
      : " | | | ";
    return `| ${name} | ${of((p) => p.rps)} | ${of((p) => p.p50)} | ${of((p) => p.p99)} | ${fmt(median(ps.map((p) => p.p99)) / q99)}× | ${loopsCell} | ${of((p) => p.serviceCpu)} | ${of((p) => p.dbCpu)} | ${ps.reduce((s, p) => s + p.bad, 0)} |`;
  });
  const options = `--events ${r.events} --rare ${r.rare} --players ${r.players} --rounds ${r.rounds} --seconds ${r.seconds} --connections ${r.connections} --users ${r.users} --read ${r.read}`;
  return [
    "<!-- bench/replay.ts: start -->",
    "## Replays of the event stream",
    "",
    `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npx tsx bench/replay.ts ${options}${r.production ? " --production" : ""}\`): one instance of the service ` +
      `(${r.production ? "production settings: request log at info, metrics served, limits counted in Redis, never reached" : "limits off, logs at warn, no metrics"}; ` +
      `EVENTS_STREAMS_PER_USER 8) on the local PostgreSQL, all on this machine (${os.cpus().length} cores, shared); Node ${process.version}; ` +
      `load average ${r.loadAtStart} at the start, ${loadAverage()} at the end. ${r.outbox} events in the outbox, ${r.events} of them after the resume point ` +
      `(${r.rareCount} of them ${RARE_TYPE}), in 7 transactions. One replay alone on the quiet service: ${RARE_TYPE} ` +
      `${r.aloneRuns.rare.map((x) => `${Math.round(x.ms)} ms (${x.events} events)`).join(", ")}; every type ${Math.round(r.aloneRuns.all[0]!.ms)} ms (${r.aloneRuns.all[0]!.events} events). ` +
      `Four replays of every type at once, nothing else running, caught up after ` +
      `${[...r.together].map(([label, ms]) => `${ms.map((x) => fmt(x / 1000)).join(", ")} s (${label})`).join("; ")}.`,
    "",
    `Another API user's GET ${r.route} (${r.tool}, ${r.connections} connections, ${r.seconds} s a phase, ${r.rounds} rounds in alternating order, medians of the rounds) ` +
      `while ${r.loops} loops replay from the resume point (rare: \`?types=${RARE_TYPE}\`; all: every type) until caught up, then close and start again, ` +
      `${r.perMinute > 0 ? `each user's within ${r.perMinute} replays a minute (the default rate limit)` : "as fast as they go"}; one: the four loops are one API user's; four: one user each. Caught up: replays finished, all rounds (429s); their median time and events received; ` +
      `events/s: read by each loop. CPU: seconds per second of the service's process and of its PostgreSQL backends.`,
    "",
    "| phase | req/s | p50 ms | p99 ms | p99 / quiet | caught up | catch-up ms | events | events/s a loop | service CPU | DB CPU | failed reads |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...table,
    "<!-- bench/replay.ts: end -->",
  ].join("\n");
}
