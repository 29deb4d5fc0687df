import { describe, expect, it } from "vitest";
import { CallerDirectory } from "../src/auth/callers.js";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../src/core/api-keys.js";
import { ConfigError, loadConfig } from "../src/core/config.js";
import { foreignKeyViolation, isDatabaseUnavailable, isRecordNotFound, uniqueViolation } from "../src/db/prisma-errors.js";
import { conflictMessage } from "../src/entities/constraints.js";
import { formatTimestamp, parseTimestamp } from "../src/fields/timestamp.js";
import { Prisma } from "../src/generated/prisma/client.js";

describe("configuration", () => {
  it("when nothing is set, then the documented defaults apply", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, host: "0.0.0.0", databaseUrl: undefined, dbPoolMax: 10, logLevel: "info" });
    expect(c.callers).toEqual({ A: ["user-A", "user_A"], B: ["user-B"], C: ["user-C"], D: ["user-D"] });
    expect(c.dataDir).toMatch(/[/\\]data$/);
  });

  it("when groups are configured, then lists are split on commas and trimmed", () => {
    expect(loadConfig({ CALLERS_USER_D: " website , web-2 ,," }).callers.D).toEqual(["website", "web-2"]);
  });

  it("when several variables are bad, then one error names each of them", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "http", DB_POOL_MAX: "0", DATABASE_URL: "mysql://x", CALLERS_USER_C: " , " });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toContain("PORT: expected an integer between 0 and 65535");
    expect(problems).toContain("DB_POOL_MAX: expected an integer between 1 and 1000");
    expect(problems).toContain("DATABASE_URL: expected a postgres:// or postgresql:// URL");
  });

  it("when a group is empty, then start-up is refused naming it", () => {
    expect(() => loadConfig({ CALLERS_USER_C: " , " })).toThrow("CALLERS_USER_C: expected at least one username");
  });

  it("when the hardening variables are not set, then the documented defaults apply", () => {
    expect(loadConfig({})).toMatchObject({
      webConcurrency: 1,
      dbConnectTimeoutMs: 5_000,
      dbStatementTimeoutMs: 15_000,
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      sendTimeoutMs: 30_000,
      heavyListWaitMs: 10_000,
      shutdownTimeoutMs: 10_000,
      rateLimitPerMinute: 600,
      authFailuresPerMinute: 30,
      redisUrl: undefined,
      trustProxy: false,
      metricsHost: "127.0.0.1",
      metricsPort: 9464,
    });
    expect(loadConfig({ METRICS_PORT: "off", TRUST_PROXY: "loopback, 10.0.0.0/8" })).toMatchObject({
      metricsPort: undefined,
      trustProxy: "loopback, 10.0.0.0/8",
    });
  });

  it("when hardening variables contradict each other or are malformed, then start-up is refused naming them", () => {
    expect(() => loadConfig({ WEB_CONCURRENCY: "2" })).toThrow("WEB_CONCURRENCY: more than one worker needs DATABASE_URL");
    expect(() => loadConfig({ DATABASE_READ_URL: "postgresql://r@replica/db" })).toThrow("DATABASE_READ_URL: a read replica needs DATABASE_URL");
    expect(() => loadConfig({ DATABASE_DIRECT_URL: "postgresql://u@db/db" })).toThrow("DATABASE_DIRECT_URL: a direct connection needs DATABASE_URL");
    expect(() => loadConfig({ DATABASE_URL: "postgresql://u@pooler/db", DATABASE_DIRECT_URL: "http://db" })).toThrow(
      "DATABASE_DIRECT_URL: expected a postgres://",
    );
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: "60000", REQUEST_TIMEOUT_MS: "30000" })).toThrow("HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS");
    expect(() => loadConfig({ TRUST_PROXY: "10.0.0.0/99" })).toThrow("TRUST_PROXY: expected false, true");
    expect(() => loadConfig({ REDIS_URL: "http://x" })).toThrow("REDIS_URL: expected a redis:// or rediss:// URL");
    expect(() => loadConfig({ SEND_TIMEOUT_MS: "500" })).toThrow("SEND_TIMEOUT_MS: expected an integer between 1000 and 3600000");
    expect(() => loadConfig({ HEAVY_LIST_WAIT_MS: "0" })).toThrow("HEAVY_LIST_WAIT_MS: expected an integer between 100 and 600000");
    expect(() => loadConfig({ METRICS_PORT: "70000" })).toThrow("METRICS_PORT: expected a port (0-65535) or off");
  });

  it("when PUBLIC_URL is set, then it is kept without its trailing slash; with /api, a query or another scheme, start-up is refused", () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: " https://example.org/community/ " }).publicUrl).toBe("https://example.org/community");
    expect(() => loadConfig({ PUBLIC_URL: "https://example.org/api" })).toThrow("PUBLIC_URL: expected the service's root, without /api");
    expect(() => loadConfig({ PUBLIC_URL: "https://example.org/?x=1" })).toThrow("PUBLIC_URL: expected an http:// or https:// URL");
    expect(() => loadConfig({ PUBLIC_URL: "ftp://example.org" })).toThrow("PUBLIC_URL: expected an http:// or https:// URL");
  });

  it("when DATABASE_URL is blank, then the embedded database is used", () => {
    expect(loadConfig({ DATABASE_URL: "  " }).databaseUrl).toBeUndefined();
  });
});

describe("timestamps", () => {
  it.each([
    ["2026-01-31T18:00:00Z", "2026-01-31T18:00:00Z"],
    ["2026-01-31T18:00:00.999Z", "2026-01-31T18:00:00Z"],
    ["2026-01-31T20:00:00+02:00", "2026-01-31T18:00:00Z"],
    ["2026-01-31T17:30:00.5-00:30", "2026-01-31T18:00:00Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"],
    ["2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00Z"],
    ["0050-06-01T00:00:00Z", "0050-06-01T00:00:00Z"],
    ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"],
    ["9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"],
    ["9999-12-31T23:59:59+01:00", "9999-12-31T22:59:59Z"],
  ])("when %s is read, then it is written %s", (input, output) => {
    expect(formatTimestamp(parseTimestamp(input)!)).toBe(output);
  });

  it.each([
    "2026-02-29T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T23:60:00Z",
    "2026-01-01T00:00:00",
    "2026-01-01",
    "2026-01-01 00:00:00Z",
    "1735689600",
    "2026-01-01T00:00:00+25:00",
    "9999-12-31T23:59:59-01:00",
    "0001-01-01T00:30:00+01:00",
    "0000-06-01T00:00:00Z",
    "",
  ])("when %j is read, then it is refused", (input) => {
    expect(parseTimestamp(input)).toBeUndefined();
  });
});

describe("API keys", () => {
  it("when generated, then each is gsk_ and 43 base64url characters, distinct, hinted by its first 8 characters", () => {
    const keys = Array.from({ length: 100 }, generateApiKey);
    for (const k of keys) {
      expect(k.key).toMatch(/^gsk_[A-Za-z0-9_-]{43}$/);
      expect(looksLikeApiKey(k.key)).toBe(true);
      expect(k.hash).toBe(hashApiKey(k.key));
      expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(k.hint).toBe(k.key.slice(0, 8));
    }
    expect(new Set(keys.map((k) => k.key)).size).toBe(100);
  });

  it("when a value is not shaped like a key, then it is refused before any lookup", () => {
    for (const v of ["", "gsk_", "gsk_short", `sk_${"a".repeat(43)}`, `gsk_${"a".repeat(42)}!`, `gsk_${"a".repeat(44)}`]) {
      expect(looksLikeApiKey(v)).toBe(false);
    }
  });
});

describe("caller groups", () => {
  const dir = new CallerDirectory({ A: ["user-A", "user_A"], B: ["Website", "user-A"], C: ["user-C"], D: ["user-D"] });
  it("when a name is in several groups, in any case, then it has all of them", () => {
    expect([...dir.groupsOf("USER-a")].sort()).toEqual(["A", "B"]);
    expect(dir.may("website", ["B"])).toBe(true);
    expect(dir.may("website", ["A", "C"])).toBe(false);
  });
  it("when a name is in no group, then it may call nothing", () => {
    expect(dir.groupsOf("stranger").size).toBe(0);
    expect(dir.may("stranger", ["A", "B", "C", "D"])).toBe(false);
  });
});

describe("409 messages", () => {
  it("when the client's value is known, then the message names it and the constraint", () => {
    expect(conflictMessage({ constraint: "players_pseudo_key", fields: [] }, { pseudo: "Notch" })).toBe(
      "Pseudo 'Notch' is already used (unique constraint players_pseudo_key, case-insensitive)",
    );
    expect(
      conflictMessage(
        { constraint: "reward_logs_player_reward_time_key", fields: [] },
        { playerId: 7, rewardId: 42, rewardedAt: new Date("2026-03-04T05:06:07.250Z") },
      ),
    ).toBe("Reward log (playerId 7, rewardId 42, rewardedAt 2026-03-04T05:06:07Z) is already recorded (unique constraint reward_logs_player_reward_time_key)");
  });

  it("when the value is not known, then the fields and the constraint are named", () => {
    expect(conflictMessage({ constraint: "cosmetics_name_key", fields: [] })).toBe(
      "Conflict with existing data on name (unique constraint cosmetics_name_key)",
    );
    expect(conflictMessage({ constraint: "some_future_key", fields: ["x"] }, { x: 1 })).toBe(
      "Conflict with existing data on x (unique constraint some_future_key)",
    );
  });
});

describe("Prisma errors through driver adapters", () => {
  const known = (code: string, meta: Record<string, unknown>) => new Prisma.PrismaClientKnownRequestError("failed", { code, clientVersion: "7", meta });

  it("when the pg adapter reports a unique violation, then the constraint comes from the cause's index", () => {
    const error = known("P2002", {
      modelName: "Cosmetic",
      driverAdapterError: {
        name: "DriverAdapterError",
        cause: {
          originalCode: "23505",
          originalMessage: 'duplicate key value violates unique constraint "cosmetics_name_key"',
          kind: "UniqueConstraintViolation",
          constraint: { index: "cosmetics_name_key" },
          table: "cosmetics",
        },
      },
    });
    expect(uniqueViolation(error)).toEqual({ constraint: "cosmetics_name_key", fields: [] });
  });

  it("when the PGlite adapter reports one, then the constraint comes from PostgreSQL's message and the fields from the cause", () => {
    const error = known("P2002", {
      modelName: "ApiUser",
      driverAdapterError: {
        name: "DriverAdapterError",
        cause: {
          originalCode: "23505",
          originalMessage: 'duplicate key value violates unique constraint "api_users_username_key"',
          kind: "UniqueConstraintViolation",
          constraint: { fields: ["username"] },
        },
      },
    });
    expect(uniqueViolation(error)).toEqual({ constraint: "api_users_username_key", fields: ["username"] });
  });

  it("when a raw query hits a unique index (P2010), then it is a unique violation too", () => {
    const error = known("P2010", {
      driverAdapterError: { cause: { kind: "UniqueConstraintViolation", originalMessage: 'violates unique constraint "players_pseudo_key"' } },
    });
    expect(uniqueViolation(error)?.constraint).toBe("players_pseudo_key");
  });

  it("when either adapter reports a foreign key violation, then the constraint is named and it is not taken for a unique one", () => {
    const pg = known("P2003", {
      driverAdapterError: { cause: { kind: "ForeignKeyConstraintViolation", originalCode: "23503", constraint: { index: "worlds_owner_id_fkey" } } },
    });
    const pglite = known("P2003", {
      driverAdapterError: {
        cause: {
          kind: "ForeignKeyConstraintViolation",
          originalMessage: 'insert or update on table "worlds" violates foreign key constraint "worlds_owner_id_fkey"',
          constraint: { fields: ["ownerId"] },
        },
      },
    });
    expect(foreignKeyViolation(pg)).toEqual({ constraint: "worlds_owner_id_fkey", fields: [] });
    expect(foreignKeyViolation(pglite)).toEqual({ constraint: "worlds_owner_id_fkey", fields: ["ownerId"] });
    expect(uniqueViolation(pg)).toBeUndefined();
    expect(foreignKeyViolation(known("P2002", {}))).toBeUndefined();
  });

  it("when the error is something else, then it is not mistaken for one", () => {
    expect(uniqueViolation(new Error("x"))).toBeUndefined();
    expect(uniqueViolation(known("P2003", {}))).toBeUndefined();
    expect(isRecordNotFound(known("P2025", {}))).toBe(true);
    expect(isRecordNotFound(known("P2002", {}))).toBe(false);
  });

  it("when the database cannot be reached, then it is recognised", () => {
    expect(isDatabaseUnavailable(known("P2010", { driverAdapterError: { cause: { kind: "DatabaseNotReachable" } } }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDatabaseUnavailable(known("P2002", {}))).toBe(false);
  });

  it("when the database is too slow or drops the connection, then that counts as unavailable too (503), as seen from node-postgres and the pg adapter", () => {
    const postgres = (code: string, message: string) =>
      known("P2010", { driverAdapterError: { cause: { kind: "postgres", originalCode: code, originalMessage: message } } });
    expect(isDatabaseUnavailable(postgres("57014", "canceling statement due to statement timeout"))).toBe(true);
    expect(isDatabaseUnavailable(postgres("57P01", "terminating connection due to administrator command"))).toBe(true);
    expect(isDatabaseUnavailable(postgres("53300", "sorry, too many clients already"))).toBe(true);
    // The pool's own words when no connection frees up in time, and a connection's connect timeout.
    expect(isDatabaseUnavailable(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Connection terminated due to connection timeout"))).toBe(true);
    expect(isDatabaseUnavailable(known("P2028", {}))).toBe(true);
    // A misconfigured database (a replica URL naming a database that does not exist, a wrong password).
    expect(isDatabaseUnavailable(Object.assign(new Error('database "x" does not exist'), { code: "3D000" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("password authentication failed"), { code: "28P01" }))).toBe(true);
    expect(isDatabaseUnavailable(known("P2010", { driverAdapterError: { cause: { kind: "DatabaseDoesNotExist" } } }))).toBe(true);
    // A constraint or syntax failure is not.
    expect(isDatabaseUnavailable(postgres("23505", "duplicate key value violates unique constraint"))).toBe(false);
    expect(isDatabaseUnavailable(postgres("42601", "syntax error"))).toBe(false);
  });
});

describe("the heavy-list bulkhead", () => {
  const WAIT = 60_000;
  it("when more ask than the limit, then the others wait in order and each release lets one in", async () => {
    const { Bulkhead } = await import("../src/limits/bulkhead.js");
    const bulkhead = new Bulkhead(2);
    const order: string[] = [];
    const a = await bulkhead.acquire(WAIT);
    const b = await bulkhead.acquire(WAIT);
    const c = bulkhead.acquire(WAIT).then((release) => (order.push("c"), release));
    const d = bulkhead.acquire(WAIT).then((release) => (order.push("d"), release));
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    a();
    a(); // a second release of the same holder changes nothing
    const releaseC = await c;
    expect(order).toEqual(["c"]);
    b();
    const releaseD = await d;
    expect(order).toEqual(["c", "d"]);
    releaseC();
    releaseD();
    const e = await bulkhead.acquire(WAIT);
    const f = await bulkhead.acquire(WAIT);
    expect(typeof e).toBe("function");
    expect(typeof f).toBe("function");
  });

  it("when no slot comes free within the wait, then the waiter is refused with BulkheadTimeout and holds nothing", async () => {
    const { Bulkhead, BulkheadTimeout } = await import("../src/limits/bulkhead.js");
    const bulkhead = new Bulkhead(1);
    const holder = await bulkhead.acquire(WAIT);
    await expect(bulkhead.acquire(50)).rejects.toBeInstanceOf(BulkheadTimeout);
    expect(bulkhead.state).toEqual({ active: 1, waiting: 0 });
    holder();
    expect(bulkhead.state).toEqual({ active: 0, waiting: 0 });
  });

  it("when a waiter leaves (its signal aborts), then it leaves the queue at once and the next release goes to the one behind it", async () => {
    const { Bulkhead } = await import("../src/limits/bulkhead.js");
    const bulkhead = new Bulkhead(1);
    const holder = await bulkhead.acquire(WAIT);
    const leaving = new AbortController();
    const leaver = bulkhead.acquire(WAIT, leaving.signal);
    const next = bulkhead.acquire(WAIT);
    expect(bulkhead.state).toEqual({ active: 1, waiting: 2 });
    leaving.abort(new Error("client gone"));
    await expect(leaver).rejects.toThrow("client gone");
    expect(bulkhead.state).toEqual({ active: 1, waiting: 1 });
    holder();
    const release = await next;
    expect(bulkhead.state).toEqual({ active: 1, waiting: 0 });
    release();
    expect(bulkhead.state).toEqual({ active: 0, waiting: 0 });
    // Already gone when it asks: refused without queueing.
    await expect(bulkhead.acquire(WAIT, leaving.signal)).rejects.toThrow("client gone");
    expect(bulkhead.state).toEqual({ active: 0, waiting: 0 });
  });
});
