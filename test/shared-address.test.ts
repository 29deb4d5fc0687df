import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyCache } from "../src/auth/key-cache.js";
import type { Database } from "../src/db/database.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { countingKeyLookups } from "./helpers/key-lookups.js";
import { REDIS_URL, redisAvailable } from "./helpers/redis.js";

/**
 * A game network behind one public address: nine servers with valid keys,
 * and one plugin left with a revoked key, retrying in a loop. Counted in
 * Redis on PostgreSQL (as deployed with several instances), in memory on
 * PGlite (a single instance).
 */
const redisUp = onPostgres && redisAvailable;

const NETWORK_ADDRESS = "198.51.100.200";
/**
 * The rate limits' window, shortened from a minute so that the test runs a window and a half in 12 s, and
 * the failures each window allows: a third of the minute's default, so that a loaded machine, answering the
 * looping server's first requests slowly, still spends the budget within the first window.
 */
const WINDOW_SECONDS = 8;
const FAILURE_BUDGET = 10;
const SECONDS = 1.5 * WINDOW_SECONDS;
const LOOP_PER_SECOND = 20;
const VALID_PER_SECOND = 2;
const MAPS = "/api/parkour/get-all-maps";

let database: TestDatabase;
let app: TestApp;
let counted: ReturnType<typeof countingKeyLookups>;
const prefix = `rl-shared-${randomBytes(6).toString("hex")}:`;

beforeAll(async () => {
  database = await createTestDatabase();
  counted = countingKeyLookups(database.db.prisma);
  app = await startTestApp({
    database: { ...database, db: withCountedLookups(database.db), drop: () => Promise.resolve() },
    keyCache: new KeyCache(),
    rateLimitWindowMs: WINDOW_SECONDS * 1000,
    env: {
      AUTH_FAILURES_PER_MINUTE: String(FAILURE_BUDGET),
      RATE_LIMIT_PER_MINUTE: "600",
      TRUST_PROXY: "loopback",
      CALLERS_USER_A: Array.from({ length: 10 }, (_, i) => `server-${i}`).join(","),
      ...(redisUp ? { REDIS_URL } : {}),
      REDIS_KEY_PREFIX: prefix,
    },
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
  if (redisUp) {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
});

describe(`one address shared by ten servers (counters ${redisUp ? "in Redis" : "in memory"})`, () => {
  it(
    `when one server loops on a revoked key at ${LOOP_PER_SECOND} req/s for ${SECONDS} s, then the nine with valid keys are never refused, and the looping one gets 429 once over the budget of each window`,
    async () => {
      const valid = await Promise.all(Array.from({ length: 9 }, (_, i) => app.key(`server-${i + 1}`)));
      const revoked = await app.key("server-0");
      await app.users.revoke("server-0");
      counted.reset();

      const started = Date.now();
      const [looping, ...nine] = await Promise.all([loop(revoked, LOOP_PER_SECOND, started), ...valid.map((key) => loop(key, VALID_PER_SECOND, started))]);

      const refusalsOfTheNine = nine.flatMap((statuses) => statuses.filter((s) => s !== 200));
      const count = (status: number) => looping.filter((s) => s === status).length;
      const figures = {
        loopingSent: looping.length,
        looping401: count(401),
        looping429: count(429),
        validSentEach: nine.map((statuses) => statuses.length),
        refusalsOfTheNine: refusalsOfTheNine.length,
        keyLookups: counted.lookups(),
      };
      console.info(`shared address (${redisUp ? "PostgreSQL, Redis" : "PGlite, memory"}): ${JSON.stringify(figures)}`);

      expect(refusalsOfTheNine).toEqual([]);
      expect(count(401) + count(429)).toBe(looping.length);
      // Two windows: the budget once in each, plus what was under way when it ran out.
      // Less one at most: a request decided as the first window ends can be refused by it (429) and
      // counted in the second (its key check, past the end, fails), which then admits one failure fewer.
      expect(count(401)).toBeGreaterThanOrEqual(2 * FAILURE_BUDGET - 1);
      expect(count(401)).toBeLessThanOrEqual(3 * FAILURE_BUDGET);
      expect(count(429)).toBeGreaterThan(looping.length / 2);
      // The looping key is looked up once; the valid keys again when their cache entry expires.
      expect(counted.lookups()).toBeLessThan(3 * valid.length + 2);
    },
    (SECONDS + 60) * 1000,
  );
});

/** Sends GET requests with `key` from the shared address, `perSecond` on a fixed schedule, for SECONDS; returns every status. */
async function loop(key: string, perSecond: number, started: number): Promise<number[]> {
  const statuses: number[] = [];
  const interval = 1000 / perSecond;
  for (let i = 0; i < SECONDS * perSecond; i++) {
    const wait = started + i * interval - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const res = await fetch(`${app.url}${MAPS}`, { headers: { "X-API-Key": key, "X-Forwarded-For": NETWORK_ADDRESS } });
    await res.arrayBuffer();
    if (res.status === 429 && !res.headers.get("retry-after")) throw new Error("429 without Retry-After");
    statuses.push(res.status);
  }
  return statuses;
}

/** The database, with every lookup of an API key counted. */
function withCountedLookups(db: Database): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prisma") return counted.prisma;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
