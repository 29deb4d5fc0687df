import path from "node:path";
import { z } from "zod";

/** The four caller groups of the spec (user-A … user-D). */
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

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: integer(0, 65535, 3000),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((raw) => (raw?.trim() ? raw.trim() : undefined))
    .refine((url) => url === undefined || /^postgres(ql)?:\/\//.test(url), {
      message: "expected a postgres:// or postgresql:// URL",
    }),
  DATA_DIR: z.string().min(1).default("./data"),
  DB_POOL_MAX: integer(1, 1000, 10),
  HEAVY_LISTS_AT_ONCE: integer(1, 100, 2),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CALLERS_USER_A: usernameList("user-A,user_A"),
  CALLERS_USER_B: usernameList("user-B"),
  CALLERS_USER_C: usernameList("user-C"),
  CALLERS_USER_D: usernameList("user-D"),
});

export interface Config {
  nodeEnv: "development" | "production" | "test";
  host: string;
  port: number;
  /** PostgreSQL server; undefined selects the embedded PGlite database in dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  dbPoolMax: number;
  /** Full lists (all players, by grade, infected stats) built and sent at once; the rest wait. */
  heavyListsAtOnce: number;
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
  const empty = CALLER_GROUPS.filter((g) => callers[g].length === 0);
  if (empty.length > 0) {
    throw new ConfigError(empty.map((g) => `CALLERS_USER_${g}: expected at least one username`));
  }
  return {
    nodeEnv: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    dbPoolMax: e.DB_POOL_MAX,
    heavyListsAtOnce: e.HEAVY_LISTS_AT_ONCE,
    logLevel: e.LOG_LEVEL,
    callers,
  };
}
