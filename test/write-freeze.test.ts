import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { createLogger } from "../src/core/logger.js";
import { type Database, openDatabase } from "../src/db/database.js";
import { FROZEN_RETRY_AFTER_S } from "../src/http/error-handler.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { makeCosmetic, makePlayer } from "./helpers/fixtures.js";

/**
 * `cli freeze` / `thaw` (docs/OPERATIONS.md, "A move that loses no write"): every write refused with
 * 503 WRITES_FROZEN while reads go on, the freeze waiting for the writes in flight, and the operator's
 * wrong commands answered in one line. The move itself, with real processes: move-without-loss.test.ts.
 */
let t: TestApp;
let cliDb: Database;
let keyA: string;
let keyB: string;
let playerId: number;
let cosmeticId: number;
const quiet = createLogger("silent");

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: "loopback" } });
  // The operator's CLI: a process of its own (its own pool on PostgreSQL).
  cliDb = t.database.url ? openDatabase({ kind: "postgres", url: t.database.url, poolMax: 2 }) : t.database.db;
  keyA = await t.key("user-A");
  keyB = await t.key("user-B");
  playerId = (await makePlayer(t.database.db.prisma)).id;
  cosmeticId = (await makeCosmetic(t.database.db.prisma)).id;
});
afterAll(async () => {
  if (t.database.url) await cliDb.close();
  await t.close();
});

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    argv,
    { config: t.config, db: cliDb, logger: quiet, actor: { actor: "cli:operator" } },
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    },
  );
  return { code, stdout, stderr };
}

const reward = (rewardId: number, key?: string) => {
  const req = request(t.url).post("/api/website/create-reward-log").set("X-API-Key", keyA);
  return (key ? req.set("Idempotency-Key", key) : req).send({ playerId, rewardId });
};
const rewardCount = () => t.database.db.prisma.rewardLog.count();

describe("a write freeze", () => {
  it("when writes are frozen, then every write answers 503 WRITES_FROZEN with Retry-After and the reason, reads go on, nothing is written; after thaw, the same Idempotency-Key writes once", async () => {
    const frozen = await cli("freeze", "--reason", "moving to PostgreSQL");
    expect(frozen.code, frozen.stderr).toBe(0);
    expect(frozen.stdout).toMatch(/^Writes are frozen since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ by cli:operator \(moving to PostgreSQL\): every instance/);
    const rewardsBefore = await rewardCount();
    try {
      const refused = await reward(41, "freeze-key-1");
      expect(refused.status).toBe(503);
      expect(refused.headers["error-name"]).toBe("WRITES_FROZEN");
      expect(refused.headers["retry-after"]).toBe(String(FROZEN_RETRY_AFTER_S));
      expect(refused.body.message).toMatch(/^Writes are paused by the operator since .*Z \(moving to PostgreSQL\); reads go on and nothing was written/);
      // An update (one statement, outside a transaction) and an admin's write are refused alike.
      const cosmetic = await request(t.url).patch("/api/cosmetic/update-cosmetic").set("X-API-Key", keyA).send({ id: cosmeticId, price: 1 });
      expect([cosmetic.status, cosmetic.headers["error-name"]]).toEqual([503, "WRITES_FROZEN"]);
      const revoke = await request(t.url).post("/api/admin/users/revoke").set("X-API-Key", keyA).send({ username: "user-B" });
      expect([revoke.status, revoke.headers["error-name"]]).toEqual([503, "WRITES_FROZEN"]);
      // A player's export writes its audit entry: refused with the writes, never made unrecorded (docs/PRIVACY.md).
      const exported = await request(t.url).post("/api/admin/players/export").set("X-API-Key", keyA).send({ id: playerId });
      expect([exported.status, exported.headers["error-name"], exported.body.player]).toEqual([503, "WRITES_FROZEN", undefined]);
      const created = await cli("user", "create", "frozen-newcomer");
      expect(created.code).toBe(1);
      expect(created.stderr).toMatch(
        /^Refused: writes are frozen since .*Z \(moving to PostgreSQL\); nothing was written \(thaw lets writes through again\)\.\n$/,
      );
      expect(await t.database.db.prisma.apiUser.count({ where: { username: "frozen-newcomer" } })).toBe(0);
      // Reads answer as ever.
      await request(t.url).get("/api/player/get-all-players").set("X-API-Key", keyB).expect(200);
      await request(t.url).get("/readyz").expect(200);
      expect(await rewardCount()).toBe(rewardsBefore);
      const status = await cli("freeze", "--status");
      expect(status.stdout).toMatch(/^Writes are frozen since .* by cli:operator \(moving to PostgreSQL\)\.\n$/);
    } finally {
      const thawed = await cli("thaw");
      expect(thawed.code, thawed.stderr).toBe(0);
      expect(thawed.stdout).toMatch(/^Writes are let through again \(they were frozen since .* by cli:operator \(moving to PostgreSQL\)\)\.\n$/);
    }
    // The refusal was not stored as the key's answer: the retry writes.
    const retried = await reward(41, "freeze-key-1");
    expect(retried.status).toBe(201);
    expect(retried.headers["idempotency-replayed"]).toBeUndefined();
    expect(await rewardCount()).toBe(rewardsBefore + 1);
    expect((await cli("freeze", "--status")).stdout).toBe("Writes are not frozen.\n");
    const audit = await t.database.db.prisma.auditLog.findMany({ where: { action: { in: ["service.freeze", "service.thaw"] } }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.action, a.actor, a.target])).toEqual([
      ["service.freeze", "cli:operator", "service:writes"],
      ["service.thaw", "cli:operator", "service:writes"],
    ]);
    expect(audit[0]!.changes).toEqual({ reason: "moving to PostgreSQL" });
  });

  it("when the operator freezes twice, thaws twice, or gives a bad reason, then one line says what was refused and that nothing was changed", async () => {
    expect((await cli("freeze")).code).toBe(0);
    try {
      const again = await cli("freeze", "--reason", "second");
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /^Refused: writes are already frozen since .* by cli:operator \(the operator is moving or checking the database\); nothing was changed \(thaw first to freeze anew\)\.\n$/,
      );
      expect((await cli("freeze", "--status")).stdout).toContain("(the operator is moving or checking the database)");
    } finally {
      expect((await cli("thaw")).code).toBe(0);
    }
    const notFrozen = await cli("thaw");
    expect(notFrozen).toMatchObject({ code: 0, stdout: "Writes were not frozen; nothing was changed.\n" });
    for (const reason of ["", "two\nlines", "x".repeat(201)]) {
      const bad = await cli("freeze", "--reason", reason);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe("Invalid --reason: expected 1 to 200 characters on one line\n");
    }
    expect((await cli("freeze", "--status")).stdout).toBe("Writes are not frozen.\n");
    expect((await cli("freeze", "extra")).code).toBe(2);
  });

  it("when a key is used from an address its user may not use while writes are frozen, then still 403 (the refusal is logged, not audited)", async () => {
    await cli("user", "create", "fenced");
    const key = (await cli("user", "rotate", "fenced", "--grace", "0")).stdout.trim();
    expect((await cli("user", "allow-ip", "fenced", "192.0.2.1")).code).toBe(0);
    expect((await cli("freeze")).code).toBe(0);
    try {
      const res = await request(t.url).get("/api/player/get-all-players").set({ "X-API-Key": key, "X-Forwarded-For": "198.51.100.9" });
      expect(res.status).toBe(403);
      expect(t.logs.lines.some((l) => /not in the audit log: writes are frozen/.test(String(l.msg)))).toBe(true);
    } finally {
      expect((await cli("thaw")).code).toBe(0);
    }
  });

  // On PGlite the CLI's command and the writes share the one connection: nothing is in flight beside it.
  it.runIf(onPostgres)("when a write is in flight as the freeze comes, then freeze waits for it to commit, and the next write is refused", async () => {
    const writer = new pg.Client({ connectionString: t.database.url });
    await writer.connect();
    try {
      await writer.query("BEGIN");
      await writer.query(`INSERT INTO reward_logs ("playerId", "rewardId") VALUES ($1, 4242)`, [playerId]);
      let done = false;
      const freezing = cli("freeze", "--reason", "in flight").then((r) => ((done = true), r));
      // The freeze waits on the writer's lock (an advisory lock, seen in pg_locks).
      const probe = new pg.Client({ connectionString: t.database.url });
      await probe.connect();
      try {
        for (;;) {
          const { rows } = await probe.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
          if (rows[0].n > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await probe.end();
      }
      expect(done).toBe(false);
      await writer.query("COMMIT");
      const frozen = await freezing;
      expect(frozen.code, frozen.stderr).toBe(0);
      expect(await t.database.db.prisma.rewardLog.count({ where: { rewardId: 4242 } })).toBe(1);
      const refused = await writer
        .query(`INSERT INTO reward_logs ("playerId", "rewardId") VALUES ($1, 4243)`, [playerId])
        .catch((e: Error & { code?: string }) => e);
      expect((refused as { code?: string }).code).toBe("WF001");
      expect((await reward(4244)).status).toBe(503);
    } finally {
      await writer.end();
      expect((await cli("thaw")).code).toBe(0);
    }
  });
});
