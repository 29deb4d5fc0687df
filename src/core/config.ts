import path from "node:path";
import { z } from "zod";
import { integer, optionalUrl, parseTrustProxy, secretKey, timeZone, usernameList, validTrustProxy } from "./config-rules.js";
import { OperatorError } from "./operator-error.js";
import { TRACING_ENV } from "./tracing-config.js";

/** The longest a request may be set to wait for a full-list slot (its Retry-After is this at most). */
export const MAX_HEAVY_LIST_WAIT_MS = 600_000;

/** The four caller groups of the spec (user-A … user-D). */
export const CALLER_GROUPS = ["A", "B", "C", "D"] as const;
export type CallerGroup = (typeof CALLER_GROUPS)[number];

/**
 * Every variable the service reads, with its rule and default; the Config
 * key of each is its name in camelCase (HEAVY_LIST_WAIT_MS → heavyListWaitMs),
 * but the caller groups, gathered in `callers`.
 */
export const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: integer(0, 65535, 3000),
  /** PostgreSQL server; unset selects the embedded PGlite database in DATA_DIR. */
  DATABASE_URL: optionalUrl(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL"),
  /** A read replica for the read-only routes; unset: they read from DATABASE_URL. */
  DATABASE_READ_URL: optionalUrl(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL"),
  /**
   * PostgreSQL past a transaction-mode pooler (DATABASE_URL is the pooler), for what needs a session of its own:
   * LISTEN and migrations. Unset: those use DATABASE_URL, and LISTEN falls back to polling where it is not delivered.
   */
  DATABASE_DIRECT_URL: optionalUrl(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL"),
  DATA_DIR: z
    .string()
    .min(1)
    .default("./data")
    .transform((dir) => path.resolve(dir)),
  /** The erasure ledger (docs/PRIVACY.md), outliving the database; unset: DATA_DIR/erasures.jsonl; `off`: none. Read, never written, by a drill. */
  ERASURE_LEDGER: z.string().min(1).optional(),
  DB_POOL_MAX: integer(1, 1000, 10),
  /** The statements run more than once are prepared on each connection; false for PgBouncer's transaction mode before 1.21. */
  // Unset: prepared unless DATABASE_URL turns out to be a transaction-mode pooler (db/pooler.ts).
  DB_PREPARED_STATEMENTS: z
    .enum(["true", "false"])
    .optional()
    .transform((raw) => (raw === undefined ? undefined : raw === "true")),
  /** Worker processes (node:cluster) sharing the port; 1 = this process serves alone. */
  WEB_CONCURRENCY: integer(1, 256, 1),
  /** Apply pending migrations at start-up; false: refuse to start while any is pending (a release step applies them). */
  MIGRATE_ON_START: z
    .enum(["true", "false"])
    .default("true")
    .transform((raw) => raw === "true"),
  /**
   * Full lists (all players, by grade, infected stats) sent at once; the rest wait. A streamed list holds
   * at most two batches (about 1 MB), so this bounds the database and CPU share of lists more than memory.
   */
  HEAVY_LISTS_AT_ONCE: integer(1, 100, 8),
  /** How long a full list waits for one of those slots; then 503 LISTS_BUSY with Retry-After. */
  HEAVY_LIST_WAIT_MS: integer(100, MAX_HEAVY_LIST_WAIT_MS, 10_000),
  /** The longest a full list holds its slot, until its client has taken it all; a slower client is cut off. */
  HEAVY_LIST_DEADLINE_MS: integer(1_000, 3_600_000, 120_000),
  /** Waiting for a PostgreSQL connection (new, or free in the pool) longer than this is a 503. */
  DB_CONNECT_TIMEOUT_MS: integer(100, 600_000, 5_000),
  /** PostgreSQL cancels a statement running longer than this (statement_timeout): a 503. */
  DB_STATEMENT_TIMEOUT_MS: integer(100, 3_600_000, 15_000),
  /** Node's server.requestTimeout: a request not fully received by then is dropped with 408. */
  REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000, 30_000),
  /** Node's server.headersTimeout: headers not received by then, 408. */
  HEADERS_TIMEOUT_MS: integer(1_000, 3_600_000, 10_000),
  /** Node's server.keepAliveTimeout: an idle keep-alive connection is closed after this. */
  KEEP_ALIVE_TIMEOUT_MS: integer(100, 3_600_000, 5_000),
  /** A client that takes none of what was written to it for this long, mid-answer, is cut off (http-server.ts). */
  SEND_TIMEOUT_MS: integer(1_000, 3_600_000, 30_000),
  /** On SIGTERM/SIGINT, in-flight requests get this long to finish before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: integer(100, 3_600_000, 10_000),
  /** Requests per API user and minute; 0 turns rate limiting off. */
  RATE_LIMIT_PER_MINUTE: integer(0, 10_000_000, 600),
  /** Failed authentications per client address and minute; 0 turns this limit off. */
  AUTH_FAILURES_PER_MINUTE: integer(0, 10_000_000, 30),
  /** Shared store of rate-limit counters; unset keeps them in this process's memory. */
  REDIS_URL: optionalUrl(/^rediss?:\/\//, "expected a redis:// or rediss:// URL"),
  /** Prefix of this service's keys in Redis, so that environments can share one Redis. */
  REDIS_KEY_PREFIX: z.string().min(1).max(64).default("rl:"),
  /** Express's "trust proxy": which X-Forwarded-For hops to believe when naming the client's address. */
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((raw) => parseTrustProxy(raw.trim()))
    .refine(validTrustProxy, {
      message: "expected false, true, a number of proxies, or a comma-separated list of addresses, CIDRs or loopback/linklocal/uniquelocal",
    }),
  /**
   * Where clients reach the service (scheme, host, port, any path prefix; without /api), for the servers
   * of the OpenAPI document; unset: the origin each request for the document came to.
   */
  PUBLIC_URL: optionalUrl(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, "expected an http:// or https:// URL, without query or fragment")
    .transform((url) => url?.replace(/\/+$/, ""))
    .refine((url) => url === undefined || !/\/api$/i.test(url), { message: "expected the service's root, without /api (the API is under it)" }),
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  /** Port of the Prometheus endpoint; off serves no metrics (undefined). */
  METRICS_PORT: z
    .string()
    .default("9464")
    .refine((raw) => raw.trim() === "off" || (/^\d+$/.test(raw.trim()) && Number(raw) <= 65535), {
      message: "expected a port (0-65535) or off",
    })
    .transform((raw) => (raw.trim() === "off" ? undefined : Number(raw.trim()))),
  /** Webhooks may target private, loopback and link-local addresses (tests, a receiver on the same network). */
  WEBHOOKS_ALLOW_PRIVATE: z
    .enum(["true", "false"])
    .default("false")
    .transform((raw) => raw === "true"),
  /** One delivery attempt gets this long for its answer; then it counts as failed and is retried. */
  WEBHOOKS_TIMEOUT_MS: integer(100, 120_000, 10_000),
  /** A delivery is retried (exponential backoff with jitter) for this long, then marked failed. */
  WEBHOOKS_RETRY_FOR_MS: integer(1_000, 30 * 86_400_000, 86_400_000),
  /** The wait after the first failed attempt; it doubles with each attempt, up to WEBHOOKS_BACKOFF_MAX_MS. */
  WEBHOOKS_BACKOFF_BASE_MS: integer(10, 3_600_000, 5_000),
  WEBHOOKS_BACKOFF_MAX_MS: integer(10, 86_400_000, 3_600_000),
  /** Deliveries in flight at once per instance; 0 delivers none here (the other instances do). */
  WEBHOOKS_CONCURRENCY: integer(0, 1_000, 16),
  /** Days an event is kept once every delivery of it is delivered or failed (an event stream resumes that far back); then pruned with them. */
  WEBHOOKS_RETAIN_DAYS: integer(1, 3_650, 30),
  /** Days a player's IP address is kept after the last write that set it (here and in the audit log's values); then cleared. */
  PLAYER_IP_RETAIN_DAYS: integer(1, 3_650, 90),
  /** Days the audit log keeps the values of an entry; then its field names stay, with no value (who changed what, and when). */
  AUDIT_VALUES_RETAIN_DAYS: integer(1, 3_650, 365),
  /** Where the leaderboards' days, weeks (from Monday) and months begin and end. */
  LEADERBOARD_TIME_ZONE: timeZone("UTC"),
  /** Days a past day's, week's or month's board is kept after it ended (seasons are kept). */
  LEADERBOARD_RETAIN_DAYS: integer(1, 36_500, 400),
  /** Hours an Idempotency-Key's answer is kept and replayed; then the key counts as new and its stored answer is deleted. */
  IDEMPOTENCY_RETAIN_HOURS: integer(1, 720, 24),
  /** Event streams (GET /api/events) one API user may hold open on an instance at once; beyond, 429. */
  EVENTS_STREAMS_PER_USER: integer(1, 1_000, 4),
  /** Bytes of events an event stream may have waiting for a slow client; beyond, the stream is closed (the client resumes). */
  EVENTS_BUFFER_BYTES: integer(16_384, 64 * 1_048_576, 1_048_576),
  /** Encrypts webhook secrets at rest (AES-256-GCM; at least 32 characters); unset stores them as they are. */
  WEBHOOKS_SECRET_KEY: secretKey(),
  /**
   * A restore drill's server (docs/OPERATIONS.md, "A restore drill"): it delivers no webhook, and uses neither
   * REDIS_URL nor DATABASE_READ_URL (production's), whatever they say; `restore` marks its database a drill's copy.
   */
  DRILL_MODE: z
    .enum(["true", "false"])
    .default("false")
    .transform((raw) => raw === "true"),
  /**
   * Signs every backup (HMAC-SHA256, at least 32 characters; the same on every instance), and makes restore
   * refuse a file it did not sign (unless --unsigned); unset: backups are sealed (SHA-256) but not signed.
   */
  BACKUP_SIGNING_KEY: secretKey(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Traces: the standard OTEL_* variables (tracing-config.ts); off unless an OTLP endpoint is set. */
  ...TRACING_ENV,
  /** Usernames of each caller group, as configured (compared case-insensitively). */
  CALLERS_USER_A: usernameList("user-A,user_A"),
  CALLERS_USER_B: usernameList("user-B"),
  CALLERS_USER_C: usernameList("user-C"),
  CALLERS_USER_D: usernameList("user-D"),
});

/** Every variable the service reads. */
export const ENV_VARIABLES = Object.keys(envSchema.shape);

type Env = z.output<typeof envSchema>;
/** `HEAVY_LIST_WAIT_MS` → `heavyListWaitMs`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<S>;
type CallerVariable = `CALLERS_USER_${CallerGroup}`;

export type Config = { [K in Exclude<keyof Env, CallerVariable> as CamelCase<K>]: Env[K] } & {
  callers: Record<CallerGroup, string[]>;
  /** With DRILL_MODE=true: the settings it overrode (set, but not used), for the start's warning. */
  drillOverrides: string[];
};

/** What DRILL_MODE=true turns off, whatever the environment says (and webhook deliveries): what would reach production from a drill. */
const DRILL_OFF = { redisUrl: "REDIS_URL", databaseReadUrl: "DATABASE_READ_URL" } as const;

const camelCase = (name: string) => name.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

export class ConfigError extends OperatorError {
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
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) {
    throw new ConfigError(["DATABASE_DIRECT_URL: a direct connection needs DATABASE_URL (the pooler) too"]);
  }
  if (e.WEB_CONCURRENCY > 1 && !e.DATABASE_URL) {
    throw new ConfigError(["WEB_CONCURRENCY: more than one worker needs DATABASE_URL (the embedded database admits one process)"]);
  }
  const empty = CALLER_GROUPS.filter((g) => callers[g].length === 0);
  if (empty.length > 0) {
    throw new ConfigError(empty.map((g) => `CALLERS_USER_${g}: expected at least one username`));
  }
  const config: Record<string, unknown> = { callers, drillOverrides: [] };
  // Every variable gets its key, undefined when unset (zod leaves an absent optional out).
  for (const name of ENV_VARIABLES) if (!name.startsWith("CALLERS_USER_")) config[camelCase(name)] = e[name as keyof Env];
  config.erasureLedger = e.ERASURE_LEDGER === "off" ? undefined : path.resolve(e.ERASURE_LEDGER ?? path.join(e.DATA_DIR, "erasures.jsonl"));
  if (e.DRILL_MODE) {
    // No delivery (the outbox is still pruned), counters in memory, reads on DATABASE_URL.
    config.drillOverrides = Object.values(DRILL_OFF).filter((name) => e[name] !== undefined);
    Object.assign(config, { redisUrl: undefined, databaseReadUrl: undefined, webhooksConcurrency: 0 });
  }
  return config as Config;
}
