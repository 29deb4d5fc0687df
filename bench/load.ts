/**
 * The load generators of npm run bench: wrk (Debian's `wrk` package) when it is on the PATH, else
 * autocannon. wrk is written in C and costs little CPU per request; on a 2-core machine autocannon's
 * own CPU takes the cores the faster server would use and compresses the ratios between servers.
 * Both run the same requests: wrk gets them written out in a Lua script (built from autocannon's
 * request descriptions), or a scenario's own Lua `request` function (writes whose ids never repeat).
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";

export type LoadTool = "wrk" | "autocannon";

export interface Load {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Seconds a request may take before it counts as a timeout. */
  timeout: number;
  headers: Record<string, string>;
  requests: autocannon.Request[];
  /** For wrk: a Lua `request` function (it may use `headers`, a table holding `headers` above), instead of the requests written out. */
  wrkRequest?: string;
  /** The status every answer should have. */
  expect: number;
}

export interface LoadResult {
  total: number;
  seconds: number;
  p50: number;
  p99: number;
  /** Answers with another status (wrk: outside 2xx/3xx), errors and timeouts. */
  bad: number;
}

export function availableTool(asked: string | undefined): LoadTool {
  if (asked === "autocannon") return "autocannon";
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return "wrk";
  } catch (error) {
    // wrk --version exits 1 after printing its version: found all the same.
    if ((error as { status?: number }).status === 1) return "wrk";
    if (asked === "wrk") throw new Error("--load wrk: wrk is not on the PATH (apt-get install wrk)", { cause: error });
    return "autocannon";
  }
}

export async function drive(tool: LoadTool, load: Load): Promise<LoadResult> {
  return tool === "wrk" ? wrk(load) : cannon(load);
}

async function cannon(load: Load): Promise<LoadResult> {
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.duration,
    timeout: load.timeout,
    headers: load.headers,
    requests: load.requests,
  });
  const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const bad =
    Object.entries(stats)
      .filter(([code]) => Number(code) !== load.expect)
      .reduce((n, [, v]) => n + v.count, 0) +
    result.errors +
    result.timeouts;
  return { total: result.requests.total, seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99, bad };
}

/** As many requests as autocannon would send, written out once (its setupRequest called in turn), sent in a loop. */
const WRITTEN_OUT = 2_000;

async function wrk(load: Load): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-wrk-"));
  try {
    const script = path.join(dir, "load.lua");
    writeFileSync(script, luaScript(load));
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        "wrk",
        ["-t1", `-c${load.connections}`, `-d${load.duration}s`, `--timeout`, `${load.timeout}s`, "--latency", "-s", script, load.url],
        { maxBuffer: 1 << 20 },
        (error, stdout) => (error ? reject(new Error(`wrk failed: ${error.message}`, { cause: error })) : resolve(stdout)),
      );
    });
    return parseWrk(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function luaScript(load: Load): string {
  const lua = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string for what is sent here (ASCII, escapes \" \\ \n)
  const headers = Object.entries(load.headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`);
  const lines = [`headers = { ${headers.join(", ")} }`, "n = 0"];
  if (load.wrkRequest) return [...lines, load.wrkRequest].join("\n");
  const concrete: string[] = [];
  for (let i = 0; concrete.length < WRITTEN_OUT; i++) {
    const template = load.requests[i % load.requests.length]!;
    const setup = template.setupRequest as ((req: autocannon.Request, context: object) => autocannon.Request) | undefined;
    const req = (setup ? setup({ ...template }, {}) : template) as autocannon.Request & { headers?: Record<string, string> };
    const own = Object.entries(req.headers ?? {}).map(([k, v]) => `[${lua(k)}] = ${lua(String(v))}`);
    concrete.push(`{ ${lua(req.method ?? "GET")}, ${lua(req.path ?? "/")}, { ${own.join(", ")} }, ${req.body === undefined ? "nil" : lua(String(req.body))} }`);
  }
  return [
    ...lines,
    `local specs = {\n${concrete.join(",\n")}\n}`,
    "local built = {}",
    "init = function(args)",
    "  for i, s in ipairs(specs) do",
    "    local h = {}",
    "    for k, v in pairs(headers) do h[k] = v end",
    "    for k, v in pairs(s[3]) do h[k] = v end",
    "    built[i] = wrk.format(s[1], s[2], h, s[4])",
    "  end",
    "end",
    "request = function()",
    "  n = n + 1",
    "  return built[(n - 1) % #built + 1]",
    "end",
  ].join("\n");
}

function parseWrk(out: string): LoadResult {
  const ms = (line: RegExp) => {
    const m = line.exec(out);
    if (!m) return Number.NaN;
    const value = Number(m[1]);
    return m[2] === "us" ? value / 1000 : m[2] === "s" ? value * 1000 : m[2] === "m" ? value * 60_000 : value;
  };
  const done = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
  if (!done) throw new Error(`wrk printed no summary:\n${out}`);
  const seconds = Number(done[2]) * (done[3] === "ms" ? 0.001 : done[3] === "m" ? 60 : 1);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
  return {
    total: Number(done[1]),
    seconds,
    p50: Math.round(ms(/ 50%\s+([\d.]+)(us|ms|s|m)\b/) * 10) / 10,
    p99: Math.round(ms(/ 99%\s+([\d.]+)(us|ms|s|m)\b/) * 10) / 10,
    bad: non2xx + errors,
  };
}
