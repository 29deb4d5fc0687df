/**
 * npx tsx bench/parts.ts [--calls 200000]
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
import { createLogger } from "../src/logger.js";
import { Metrics } from "../src/metrics.js";
import { requestLifecycle } from "../src/http/request-context.js";

const { values: args } = parseArgs({ options: { calls: { type: "string", default: "200000" } } });
const CALLS = Number(args.calls);

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
const req = { method: "GET", route: { path: "/player/get-player-by-nick" }, originalUrl: "/api/player/get-player-by-nick?nick=a", headers: {} } as unknown as Request;
const statuses = [200, 200, 200, 404];
const res = { statusCode: 200, locals: { mount: "/api" } } as unknown as Response;

const metrics = new Metrics(undefined, { processMetrics: false });
cpuMicrosPerCall("metrics observation", (i) => {
  (res as { statusCode: number }).statusCode = statuses[i % 4]!;
  metrics.requestFinished(req, res, 0.0012);
});

// The whole lifecycle step with the log line, and without it (level warn): the difference is the line.
const devNull = pino.destination({ fd: openSync("/dev/null", "w"), sync: false });
const lifecycle = (level: string) => {
  const handler = requestLifecycle(createLogger(level, devNull));
  const listeners: (() => void)[] = [];
  const fakeRes = { statusCode: 200, setHeader: () => undefined, on: (_: string, f: () => void) => listeners.push(f) } as unknown as Response;
  return () => {
    listeners.length = 0;
    handler(req, fakeRes, () => undefined);
    for (const f of listeners) f();
  };
};
const withLine = cpuMicrosPerCall("request lifecycle, log line at info", lifecycle("info"));
const withoutLine = cpuMicrosPerCall("request lifecycle, no log line (warn)", lifecycle("warn"));
console.log(`log line alone: ${(withLine - withoutLine).toFixed(2)} µs CPU per request`);
devNull.flushSync();
