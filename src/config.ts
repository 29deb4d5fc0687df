import path from "node:path";
import express from "express";
import { z } from "zod";

/** The four caller groups of the spec (user-A … user-D). */
/** The longest a request may be set to wait for a full-list slot (its Retry-After is this at most). */
export const MAX_HEAVY_LIST_WAIT_MS = 600_000;

export const CALLER_GROUPS = ["A", "B", "C", "D"] as const;
export type CallerGroup = (typeof CALLER_GROUPS)[number];

const usernameList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw) =>
      raw
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name.length > 0),
    );

const integer = (min: number, max: number, fallback: number) =>
  z
    .string()
    .default(String(fallback))
    .refine((raw) => /^\d+$/.test(raw.trim()), { message: `expected an integer between ${min} and ${max}` })
    .transform((raw) => Number(raw.trim()))
    .refine((n) => n >= min && n <= max, { message: `expected an integer between ${min} and ${max}` });

/** A URL of one of the schemes `scheme` matches, or unset (blank counts as unset). */
const optionalUrl = (scheme: RegExp, message: string) =>
  z
    .string()
    .optional()
    .transform((raw) => (raw?.trim() ? raw.trim() : undefined))
    .refine((url) => url === undefined || scheme.test(url), { message });

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: integer(0, 65535, 3000),
  DATABASE_URL: optionalUrl(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL"),
  DATABASE_READ_URL: optionalUrl(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL"),
  DATA_DIR: z.string().min(1).default("./data"),
  DB_POOL_MAX: integer(1, 1000, 10),
  WEB_CONCURRENCY: integer(1, 256, 1),
  MIGRATE_ON_START: z.enum(["true", "false"]).default("true"),
  HEAVY_LISTS_AT_ONCE: integer(1, 100, 2),
  HEAVY_LIST_WAIT_MS: integer(100, MAX_HEAVY_LIST_WAIT_MS, 10_000),
  HEAVY_LIST_DEADLINE_MS: integer(1_000, 3_600_000, 120_000),
  DB_CONNECT_TIMEOUT_MS: integer(100, 600_000, 5_000),
  DB_STATEMENT_TIMEOUT_MS: integer(100, 3_600_000, 15_000),
  REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000, 30_000),
  HEADERS_TIMEOUT_MS: integer(1_000, 3_600_000, 10_000),
  KEEP_ALIVE_TIMEOUT_MS: integer(100, 3_600_000, 5_000),
  SEND_TIMEOUT_MS: integer(1_000, 3_600_000, 30_000),
  SHUTDOWN_TIMEOUT_MS: integer(100, 3_600_000, 10_000),
  RATE_LIMIT_PER_MINUTE: integer(0, 10_000_000, 600),
  AUTH_FAILURES_PER_MINUTE: integer(0, 10_000_000, 30),
  REDIS_URL: optionalUrl(/^rediss?:\/\//, "expected a redis:// or rediss:// URL"),
  REDIS_KEY_PREFIX: z.string().min(1).max(64).default("rl:"),
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((raw) => parseTrustProxy(raw.trim()))
    .refine(validTrustProxy, {
      message: "expected false, true, a number of proxies, or a comma-separated list of addresses, CIDRs or loopback/linklocal/uniquelocal",
    }),
  PUBLIC_URL: optionalUrl(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, "expected an http:// or https:// URL, without query or fragment")
    .transform((url) => url?.replace(/\/+$/, ""))
    .refine((url) => url === undefined || !/\/api$/i.test(url), { message: "expected the service's root, without /api (the API is under it)" }),
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  METRICS_PORT: z
    .string()
    .default("9464")
    .refine((raw) => raw.trim() === "off" || (/^\d+$/.test(raw.trim()) && Number(raw) <= 65535), {
      message: "expected a port (0-65535) or off",
    })
    .transform((raw) => (raw.trim() === "off" ? undefined : Number(raw.trim()))),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CALLERS_USER_A: usernameList("user-A,user_A"),
  CALLERS_USER_B: usernameList("user-B"),
  CALLERS_USER_C: usernameList("user-C"),
  CALLERS_USER_D: usernameList("user-D"),
});

/** Every variable the service reads. */
export const ENV_VARIABLES = Object.keys(envSchema.shape);

export interface Config {
  nodeEnv: "development" | "production" | "test";
  host: string;
  port: number;
  /** PostgreSQL server; undefined selects the embedded PGlite database in dataDir. */
  databaseUrl: string | undefined;
  /** A read replica for the read-only routes; undefined: they read from DATABASE_URL. */
  databaseReadUrl: string | undefined;
  dataDir: string;
  dbPoolMax: number;
  /** Apply pending migrations at start-up; false: refuse to start while any is pending (a release step applies them). */
  migrateOnStart: boolean;
  /** Worker processes (node:cluster) sharing the port; 1 = this process serves alone. */
  webConcurrency: number;
  /** Full lists (all players, by grade, infected stats) built and sent at once; the rest wait. */
  heavyListsAtOnce: number;
  /** How long a full list waits for one of those slots; then 503 LISTS_BUSY with Retry-After. */
  heavyListWaitMs: number;
  /** The longest a full list holds its slot, until its client has taken it all; a slower client is cut off. */
  heavyListDeadlineMs: number;
  /** Waiting for a PostgreSQL connection (new, or free in the pool) longer than this is a 503. */
  dbConnectTimeoutMs: number;
  /** PostgreSQL cancels a statement running longer than this (statement_timeout): a 503. */
  dbStatementTimeoutMs: number;
  /** Node's server.requestTimeout: a request not fully received by then is dropped with 408. */
  requestTimeoutMs: number;
  /** Node's server.headersTimeout: headers not received by then, 408. */
  headersTimeoutMs: number;
  /** Node's server.keepAliveTimeout: an idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A client that takes none of what was written to it for this long, mid-answer, is cut off (http-server.ts). */
  sendTimeoutMs: number;
  /** On SIGTERM/SIGINT, in-flight requests get this long to finish before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** Requests per API user and minute; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Failed authentications per client address and minute; 0 turns this limit off. */
  authFailuresPerMinute: number;
  /** Shared store of rate-limit counters; undefined keeps them in this process's memory. */
  redisUrl: string | undefined;
  /** Prefix of this service's keys in Redis, so that environments can share one Redis. */
  redisKeyPrefix: string;
  /** Express's "trust proxy": which X-Forwarded-For hops to believe when naming the client's address. */
  trustProxy: boolean | number | string;
  /**
   * Where clients reach the service (scheme, host, port, any path prefix; without /api), for the servers
   * of the OpenAPI document; undefined: the origin each request for the document came to.
   */
  publicUrl: string | undefined;
  metricsHost: string;
  /** Port of the Prometheus endpoint; undefined (METRICS_PORT=off) serves no metrics. */
  metricsPort: number | undefined;
  logLevel: string;
  /** Usernames of each caller group, as configured (compared case-insensitively). */
  callers: Record<CallerGroup, string[]>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
  }
  const e = parsed.data;
  const callers = { A: e.CALLERS_USER_A, B: e.CALLERS_USER_B, C: e.CALLERS_USER_C, D: e.CALLERS_USER_D };
  if (e.HEADERS_TIMEOUT_MS > e.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(["HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS"]);
  }
  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new ConfigError(["DATABASE_READ_URL: a read replica needs DATABASE_URL (the primary) too"]);
  }
  if (e.WEB_CONCURRENCY > 1 && !e.DATABASE_URL) {
    throw new ConfigError(["WEB_CONCURRENCY: more than one worker needs DATABASE_URL (the embedded database admits one process)"]);
  }
  const empty = CALLER_GROUPS.filter((g) => callers[g].length === 0);
  if (empty.length > 0) {
    throw new ConfigError(empty.map((g) => `CALLERS_USER_${g}: expected at least one username`));
  }
  return {
    nodeEnv: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    dataDir: path.resolve(e.DATA_DIR),
    dbPoolMax: e.DB_POOL_MAX,
    webConcurrency: e.WEB_CONCURRENCY,
    migrateOnStart: e.MIGRATE_ON_START === "true",
    heavyListsAtOnce: e.HEAVY_LISTS_AT_ONCE,
    heavyListWaitMs: e.HEAVY_LIST_WAIT_MS,
    heavyListDeadlineMs: e.HEAVY_LIST_DEADLINE_MS,
    dbConnectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    sendTimeoutMs: e.SEND_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    trustProxy: e.TRUST_PROXY,
    publicUrl: e.PUBLIC_URL,
    metricsHost: e.METRICS_HOST,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    callers,
  };
}

/** Express compiles "trust proxy" when it is set, and throws on a bad address: the test it must pass. */
function validTrustProxy(value: boolean | number | string): boolean {
  try {
    express().set("trust proxy", value);
    return true;
  } catch {
    return false;
  }
}

function parseTrustProxy(raw: string): boolean | number | string {
  if (raw === "true") return true;
  if (raw === "false") return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}
