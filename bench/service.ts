import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";

/** A service process (src/main.ts through tsx) for the benchmarks that need whole instances: webhooks.ts, events.ts. */
const root = path.resolve(import.meta.dirname, "..");

/** The Redis the benchmarks count limits in, in production settings (BENCH_REDIS_URL). */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * Production settings, as operators run the service: request log at info, metrics served, both rate
 * limits counted in Redis (under `redisKeyPrefix`), high enough never to refuse.
 */
export function productionSettings(redisKeyPrefix: string): Record<string, string> {
  return {
    LOG_LEVEL: "info",
    METRICS_PORT: "0",
    RATE_LIMIT_PER_MINUTE: "10000000",
    AUTH_FAILURES_PER_MINUTE: "10000000",
    REDIS_URL: BENCH_REDIS_URL,
    REDIS_KEY_PREFIX: redisKeyPrefix,
  };
}

/** Deletes the limits' counters a run kept under `redisKeyPrefix` in BENCH_REDIS_URL, whatever their expiry. */
export async function dropRedisKeys(redisKeyPrefix: string): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 0 });
  try {
    const keys = await redis.keys(`${redisKeyPrefix}*`).catch(() => []);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => probe.once("listening", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** The flags `npm start` gives node (its memory limits), from package.json: instances run as operators run them. */
export function startFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } };
  const flags = /\bnode ((?:--\S+ )*)dist\/main\.js/.exec(scripts.start);
  if (!flags) throw new Error("package.json: the start script does not run `node [flags] dist/main.js`");
  return flags[1]!.trim().split(" ").filter(Boolean);
}

/**
 * Starts an instance on loopback against `databaseUrl` (src/main.ts, with npm start's node flags), limits
 * off and logs at warn, `env` on top; resolves once /readyz answers.
 */
export async function startService(
  databaseUrl: string,
  env: Record<string, string> = {},
  /** Where its log (stdout) goes: "ignore" for /dev/null, when a request log at info would drown the benchmark's own output. */
  stdout: "inherit" | "ignore" = "inherit",
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(), "--import", "tsx", path.join(root, "src/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
      METRICS_PORT: "off",
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "0",
      AUTH_FAILURES_PER_MINUTE: "0",
      REDIS_URL: "",
      ...env,
    },
    stdio: ["ignore", stdout, "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { child, url };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("service did not become ready");
}

/** A database of the benchmark's own on the PostgreSQL server of DATABASE_URL (the local one by default): made, then dropped. */
export function scratchDatabase(prefix: string): { url: string; create(): Promise<void>; drop(): Promise<void> } {
  const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return { url: url.toString(), create: () => admin(`CREATE DATABASE "${name}"`), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
