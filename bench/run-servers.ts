/**
 * The servers npm run bench compares (bench/run.ts): the service in each of its settings and the three
 * reference servers (bench/baseline), on each Node runtime asked for; the environment of each, and a
 * group of them started, checked to answer the same bytes, and stopped.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { rssMb } from "./proc.js";
import { freePort, productionSettings, startFlags } from "./service.js";

/** The servers compared, in the order of the tables. */
export const KINDS = {
  // What operators run first (with --production), then what each part of it costs.
  "service-production": { label: "service, production settings", script: "dist/main.js" },
  "service-production-unlogged": { label: "service, production settings but no request log", script: "dist/main.js" },
  // With BENCH_BEFORE=<a checkout, built>: its service in production settings, beside this one's (an A/B of a change).
  "service-production-before": {
    label: "service, production settings, the build before (BENCH_BEFORE)",
    script: path.join(process.env.BENCH_BEFORE ?? ".", "dist/main.js"),
  },
  // With --tracing: production settings exporting traces to a collector (bench/otlp-sink.ts), sampled at 10 % and 100 %.
  "service-production-traced-10": { label: "service, production settings, traces 10 % sampled", script: "dist/main.js" },
  "service-production-traced-100": { label: "service, production settings, traces 100 % sampled", script: "dist/main.js" },
  "service-limits": { label: "service, lean + rate limits in Redis", script: "dist/main.js" },
  service: { label: "service, lean", script: "dist/main.js" },
  express: { label: "Express 5 + pg", script: "bench/baseline/express.mjs" },
  fastify: { label: "Fastify 5 + pg", script: "bench/baseline/fastify.mjs" },
  plain: { label: "node:http + pg", script: "bench/baseline/server.mjs" },
} as const;
export type Kind = keyof typeof KINDS;
export const isService = (kind: Kind) => kind.startsWith("service");

export interface Runtime {
  major: string;
  node: string;
  version: string;
}
export interface Target {
  id: string;
  kind: Kind;
  runtime: Runtime;
}

/** The kinds a run compares: the production ones only with --production; with --servers, those alone and the two the ratios are taken against. */
export function kindsOf(production: boolean, servers: string | undefined, tracing = false): Kind[] {
  return (
    (Object.keys(KINDS) as Kind[])
      .filter((k) => production || !["service-production", "service-production-unlogged", "service-limits"].includes(k))
      .filter((k) => (production && tracing) || !k.startsWith("service-production-traced"))
      .filter((k) => (production && process.env.BENCH_BEFORE !== undefined) || k !== "service-production-before")
      // --servers service,service-limits: those alone (a quicker A/B), with the two the ratios are taken against.
      .filter((k) => !servers || k === "plain" || k === "express" || servers.split(",").includes(k))
  );
}

/**
 * The Node binaries asked for (--runtimes); by default 24, the image's line. The service refuses a line
 * package.json's engines do not name (Node 20): ask only for maintained ones (e.g. --runtimes 24,22,26).
 */
export function runtimes(asked: string | undefined): Runtime[] {
  const explicit = asked !== undefined;
  const found: Runtime[] = [];
  for (const major of (asked ?? "24").split(",").map((m) => m.trim())) {
    try {
      const node = execFileSync(process.execPath, ["scripts/node-runtime.mjs", major], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
      found.push({ major, node, version: execFileSync(node, ["--version"], { encoding: "utf8" }).trim() });
    } catch (error) {
      if (explicit) throw error;
      console.warn(`Node ${major} is not available here: the bench runs without it`);
    }
  }
  if (!found.length) throw new Error("no Node runtime to run the servers on");
  return found;
}

const SERVICE_NODE_OPTIONS = startFlags().join(" ");

/** Where the traced servers export their spans (bench/otlp-sink.ts), once started. */
export const collector = { url: "" };

/** The environment of a server of `kind` on the database `dbUrl`; the limits, where counted, under `redisPrefix` in Redis. */
export function envOf(kind: Kind, dbUrl: string, redisPrefix: string): NodeJS.ProcessEnv {
  // Set here whatever the environment or a .env file says: one process, no replica, Redis only where asked.
  const common = { DATABASE_URL: dbUrl, DATABASE_READ_URL: "", REDIS_URL: "", WEB_CONCURRENCY: "1", HOST: "127.0.0.1", NODE_ENV: "production" };
  // The service runs as `npm start` runs it: with its memory flags.
  const service = { ...common, NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS ?? SERVICE_NODE_OPTIONS };
  // One key sends thousands of requests a second: lean settings measure the routes alone.
  const lean = { LOG_LEVEL: "warn", METRICS_PORT: "off" };
  if (kind === "service") return { ...service, ...lean, RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0" };
  // The lean service with both limits counted in Redis, never reached: what the limits cost.
  if (kind === "service-limits") {
    return { ...service, ...productionSettings(redisPrefix), ...lean };
  }
  // Production: every request logged, metrics served, limits counted in Redis, high enough never to refuse.
  // The same without the request log line (LOG_LEVEL warn): what that line costs.
  if (kind === "service-production-traced-10" || kind === "service-production-traced-100") {
    const sampled = { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: kind.endsWith("-10") ? "0.1" : "1" };
    return { ...service, ...productionSettings(redisPrefix), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...sampled };
  }
  // The build before (BENCH_BEFORE) as this one: logged too, or an A/B measures the log line.
  if (kind === "service-production" || kind === "service-production-unlogged" || kind === "service-production-before") {
    return { ...service, ...productionSettings(redisPrefix), ...(kind === "service-production-unlogged" ? { LOG_LEVEL: "warn" } : {}) };
  }
  // The reference servers build a whole list in memory, as naive servers do: room for four at 1,000,000 players.
  return { ...common, NODE_OPTIONS: "--max-old-space-size=16384" };
}

function start(name: string, node: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(node, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  child.on("exit", (code) => {
    if (code && code !== 0) console.error(`${name} exited with ${code}:\n${err}`);
  });
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(killer);
}

async function waitReady(url: string, key: string, child: ChildProcess) {
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`${url} exited before it was ready`);
    try {
      const res = await fetch(`${url}/api/parkour/get-all-maps`, { headers: { "X-API-Key": key } });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready`);
}

/** The paths every server of a group must answer byte for byte alike. */
const SAME_PATHS = [
  "/api/player/get-all-players",
  "/api/player/get-all-full-players-by-gradeId?gradeId=3",
  "/api/player/get-player-by-nick?nick=NICK12",
  "/api/cosmetic/get-cosmetic?id=5",
  "/api/infecte2/get-all-infectes",
  "/api/temporary-item/get-active-items",
  "/api/parkour/get-all-maps",
];

/** The servers running, by target id, on one database; the peak RSS of each, taken when it stops. */
export class Servers {
  readonly running = new Map<string, ChildProcess>();
  readonly peakRss = new Map<string, number>();

  constructor(
    private readonly dbUrl: string,
    private readonly redisPrefix: string,
  ) {}

  pid(t: Target): number {
    return this.running.get(t.id)!.pid!;
  }

  /** Starts a group (one runtime's servers), waits until each answers `key`, checks that they answer alike; their URLs by target id. */
  async start(group: Target[], key: string): Promise<Map<string, string>> {
    const urls = new Map<string, string>();
    for (const t of group) {
      const port = await freePort();
      // Its connections named after it, so that its PostgreSQL backends' CPU can be told apart.
      const env = envOf(t.kind, this.dbUrl, this.redisPrefix);
      const named = `${env.DATABASE_URL}?application_name=${encodeURIComponent(t.id)}`;
      const child = start(t.id, t.runtime.node, KINDS[t.kind].script, { ...env, DATABASE_URL: named, PORT: String(port) });
      this.running.set(t.id, child);
      urls.set(t.id, `http://127.0.0.1:${port}`);
    }
    for (const t of group) await waitReady(urls.get(t.id)!, key, this.running.get(t.id)!);
    // Same answers, byte for byte, before any load; the lean service is the reference.
    for (const path of SAME_PATHS) {
      const bodies = await Promise.all(group.map(async (t) => (await fetch(`${urls.get(t.id)}${path}`, { headers: { "X-API-Key": key } })).text()));
      bodies.forEach((body, i) => {
        if (body !== bodies[0]) throw new Error(`${group[i]!.id} and ${group[0]!.id} differ on ${path}:\n${body.slice(0, 300)}\n${bodies[0]!.slice(0, 300)}`);
      });
    }
    return urls;
  }

  async stop(group: Target[]): Promise<void> {
    for (const t of group) {
      const child = this.running.get(t.id);
      if (!child) continue;
      if (child.exitCode === null) this.peakRss.set(t.id, Math.max(this.peakRss.get(t.id) ?? 0, rssMb(child.pid!)));
      await stop(child);
      this.running.delete(t.id);
    }
  }

  /** Whatever still runs, at the end or after a failure. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running.values()].map(stop));
  }
}
