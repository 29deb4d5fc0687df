/**
 * npx tsx bench/parts.ts [--calls 200000 --per-turn 1]
 *
 * The CPU of two things every request does after its answer, each alone, in this process (its own
 * user + system time, so other work on the machine barely moves it): the metrics observation
 * (Metrics.requestFinished) and the request log line (request-context.ts's line, through the
 * service's logger, at info, into /dev/null as fast as pino writes). Compare with a request's whole
 * CPU (npm run bench): the budget is 3 % for the observation and 5 % for the line.
 */
import { openSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Request, Response } from "express";
import { pino } from "pino";
import { createLogger, logDestination } from "../src/core/logger.js";
import { requestLifecycle } from "../src/http/request-context.js";
import { Metrics } from "../src/service/metrics.js";

const { values: args } = parseArgs({ options: { calls: { type: "string", default: "200000" }, "per-turn": { type: "string", default: "1" } } });
const CALLS = Number(args.calls);
/** Requests answered per turn of the event loop (--per-turn, default 1: a server under light load). */
const PER_TURN = Math.max(1, Number(args["per-turn"]));

function cpuMicrosPerCall(label: string, call: (i: number) => void): number {
  for (let i = 0; i < 20_000; i++) call(i); // warm up the JIT
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call(i);
  const used = process.cpuUsage(before);
  const perCall = (used.user + used.system) / CALLS;
  console.log(`${label}: ${perCall.toFixed(2)} µs CPU per call`);
  return perCall;
}

// A point read as Express leaves it once answered: its declared route, under the /api mount.
const req = {
  method: "GET",
  route: { path: "/player/get-player-by-nick" },
  originalUrl: "/api/player/get-player-by-nick?nick=a",
  headers: {},
} as unknown as Request;
const statuses = [200, 200, 200, 404];
const res = { statusCode: 200, locals: { mount: "/api" } } as unknown as Response;

const metrics = new Metrics(undefined, { processMetrics: false });
cpuMicrosPerCall("metrics observation", (i) => {
  (res as { statusCode: number }).statusCode = statuses[i % 4]!;
  metrics.requestFinished(req, res, 0.0012);
});

// The whole lifecycle step with the log line, and without it (level warn): the difference is the line.
// PER_TURN requests per turn of the event loop, so that the destination's writes happen (and count) as they
// would in the server: each line alone to /dev/null (asynchronous, as before 2026-11-25), or in blocks
// (the service's destination, logger.ts logDestination).
const lifecycle = (level: string, destination: pino.DestinationStream) => {
  // With the metrics' hook, as in production settings (without either, nothing waits for the answer).
  const handler = requestLifecycle(createLogger(level, destination), () => undefined);
  const listeners: (() => void)[] = [];
  const fakeRes = { statusCode: 200, setHeader: () => undefined, on: (_: string, f: () => void) => listeners.push(f) } as unknown as Response;
  return () => {
    listeners.length = 0;
    handler(req, fakeRes, () => undefined);
    for (const f of listeners) f();
  };
};
const devNull = () => openSync("/dev/null", "w");
const eachLine = pino.destination({ fd: devNull(), sync: false });
const blocks = logDestination(devNull());
const withoutLine = await cpuMicrosPerTurns("request lifecycle, no log line (warn)", lifecycle("warn", blocks));
const withEachLine = await cpuMicrosPerTurns("request lifecycle, log line at info, one write per line", lifecycle("info", eachLine));
const withBlocks = await cpuMicrosPerTurns("request lifecycle, log line at info, written in blocks (the service's)", lifecycle("info", blocks));
console.log(
  `log line alone: ${(withEachLine - withoutLine).toFixed(2)} µs CPU per request written one by one, ${(withBlocks - withoutLine).toFixed(2)} µs in blocks`,
);
eachLine.flushSync();
blocks.flushSync();
process.exit(0);

/** Like cpuMicrosPerCall, PER_TURN calls per turn of the event loop; the process's CPU, its thread pool's included. */
async function cpuMicrosPerTurns(label: string, call: () => void): Promise<number> {
  const turns = async (n: number) => {
    for (let i = 0; i < n; i += PER_TURN) {
      for (let j = 0; j < PER_TURN; j++) call();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await turns(20_000);
  const before = process.cpuUsage();
  await turns(CALLS);
  const used = process.cpuUsage(before);
  const perCall = (used.user + used.system) / CALLS;
  console.log(`${label}: ${perCall.toFixed(2)} µs CPU per call`);
  return perCall;
}
