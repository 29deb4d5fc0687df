import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Registry } from "prom-client";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { RetentionSweeper } from "../src/privacy/retention-sweeper.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer, unique } from "./helpers/fixtures.js";
import { openStream, positionsOf } from "./helpers/sse.js";

/**
 * Retention (issue 51, docs/PRIVACY.md "How long it is kept"): the sweep clears players' addresses,
 * the audit log's old values and addresses, finished events and old idempotent answers, each after its
 * setting; one instance at a time; never while writes are frozen; and what a client held (a sync
 * token, a resume point, an Idempotency-Key) gets its documented answer afterwards.
 */
const dir = mkdtempSync(path.join(tmpdir(), "retention-"));
let t: TestApp;
let keyA: string;
let keyB: string;
const settings = { IDEMPOTENCY_RETAIN_HOURS: "2" };

beforeAll(async () => {
  t = await startTestApp({ env: settings });
  keyA = await t.key("user-A");
  keyB = await t.key("user-B");
});
// Each test starts with no sweep on record (and no lease a failed test left).
afterEach(async () => {
  await prisma().$executeRaw`DELETE FROM service_state WHERE "name" = 'retention'`;
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const prisma = () => t.database.db.prisma;

async function cli(argv: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const config = loadConfig({ NODE_ENV: "test", ERASURE_LEDGER: "off", ...settings, ...env });
  const code = await runCli(
    argv,
    { config, db: t.database.db, logger: createLogger("silent") },
    { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) },
  );
  return { code, stdout, stderr };
}

async function sweep() {
  const out = await cli(["retention", "sweep"]);
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  const removed = Object.fromEntries([...out.stdout.matchAll(/(\d+) ([a-z_]+)/g)].map((m) => [m[2], Number(m[1])]));
  return removed as Record<"player_ip" | "audit_ip" | "audit_values" | "outbox_events" | "idempotency_records" | "leaderboard_periods", number>;
}

const ago = (days: number) => new Date(Date.now() - days * 86_400_000);

describe("the retention sweep", () => {
  it("when a player's address was set longer ago than PLAYER_IP_RETAIN_DAYS, then it is cleared, here and in old audit values, and a sync reports the player changed", async () => {
    const gradeId = 700 + Math.floor(Math.random() * 100);
    const old = await makePlayer(prisma(), { pseudo: unique("Old"), ip: "198.51.100.20", gradeId });
    const recent = await makePlayer(prisma(), { pseudo: unique("New"), ip: "198.51.100.21", gradeId });
    await prisma().$executeRaw`UPDATE players SET "ipSetAt" = ${ago(91)} WHERE id = ${old.id}`;
    // Audit entries naming the address: one past 90 days, one recent.
    const oldEntry = await prisma().auditLog.create({
      data: {
        actor: "cli:op",
        action: "player.import",
        target: `player:${old.id}`,
        changes: { ip: "198.51.100.20", pseudo: old.pseudo },
        before: { ip: "198.51.100.1" },
        at: ago(91),
      },
    });
    const newEntry = await prisma().auditLog.create({
      data: { actor: "cli:op", action: "player.import", target: `player:${recent.id}`, changes: { ip: "198.51.100.21" } },
    });
    const list = await request(t.url).get(`/api/player/get-all-full-players-by-gradeId?gradeId=${gradeId}`).set("X-API-Key", keyA);
    const token = list.headers["sync-token"] as string;

    const removed = await sweep();
    expect(removed.player_ip).toBeGreaterThanOrEqual(1);
    expect(removed.audit_ip).toBeGreaterThanOrEqual(1);

    const after = await request(t.url).get(`/api/player/get-all-full-players-by-gradeId?gradeId=${gradeId}`).set("X-API-Key", keyA);
    expect(after.body.map((p: { id: number; ip: string }) => [p.id, p.ip])).toEqual([
      [old.id, ""],
      [recent.id, "198.51.100.21"],
    ]);
    expect(after.headers.etag).not.toBe(list.headers.etag);
    const changed = await request(t.url)
      .get(`/api/player/get-all-full-players-by-gradeId?gradeId=${gradeId}&since=${encodeURIComponent(token)}`)
      .set("X-API-Key", keyA);
    expect(changed.status).toBe(200);
    expect(changed.body.map((p: { id: number; ip: string }) => [p.id, p.ip])).toEqual([[old.id, ""]]);
    // The old entry keeps its other values and says the address is gone; the recent one is untouched.
    expect(await prisma().auditLog.findUniqueOrThrow({ where: { id: oldEntry.id } })).toMatchObject({
      changes: { ip: null, pseudo: old.pseudo },
      before: { ip: null },
      retention: 1,
    });
    expect(await prisma().auditLog.findUniqueOrThrow({ where: { id: newEntry.id } })).toMatchObject({ changes: { ip: "198.51.100.21" }, retention: 0 });
    // Nothing left to remove: a second sweep changes nothing.
    expect((await sweep()).player_ip).toBe(0);
  });

  it("when an import sets a player's address again, then its count starts again", async () => {
    const player = await makePlayer(prisma(), { pseudo: unique("Back"), ip: "198.51.100.30" });
    await prisma().$executeRaw`UPDATE players SET "ipSetAt" = ${ago(200)} WHERE id = ${player.id}`;
    const file = path.join(dir, "player.json");
    const record: Record<string, unknown> = { ...(await prisma().player.findUniqueOrThrow({ where: { id: player.id } })) };
    for (const column of ["writtenBy", "ipSetAt"]) delete record[column];
    writeFileSync(file, JSON.stringify({ players: [{ ...record, ip: "198.51.100.31" }] }));
    expect((await cli(["import", file])).code).toBe(0);
    await sweep();
    expect((await prisma().player.findUniqueOrThrow({ where: { id: player.id } })).ip).toBe("198.51.100.31");
  });

  it("when an audit entry is older than AUDIT_VALUES_RETAIN_DAYS, then its field names stay with no value, who and when stay", async () => {
    const entry = await prisma().auditLog.create({
      data: {
        actor: "user-B",
        action: "form.create",
        target: "form_answer:1",
        changes: { question1: "an old answer", playerId: 3 },
        before: { question1: "older" },
        at: ago(366),
      },
    });
    const kept = await prisma().auditLog.create({
      data: { actor: "user-B", action: "form.create", target: "form_answer:2", changes: { question1: "a recent answer" }, at: ago(300) },
    });
    expect((await sweep()).audit_values).toBeGreaterThanOrEqual(1);
    expect(await prisma().auditLog.findUniqueOrThrow({ where: { id: entry.id } })).toMatchObject({
      actor: "user-B",
      action: "form.create",
      target: "form_answer:1",
      changes: { question1: null, playerId: null },
      before: { question1: null },
      retention: 2,
    });
    expect((await prisma().auditLog.findUniqueOrThrow({ where: { id: kept.id } })).changes).toEqual({ question1: "a recent answer" });
    const audit = await request(t.url).get("/api/admin/audit?limit=500").set("X-API-Key", keyA);
    expect(JSON.stringify(audit.body)).not.toContain("an old answer");
  });

  it("when an Idempotency-Key's answer is older than IDEMPOTENCY_RETAIN_HOURS, then it is deleted and a resend is a new request", async () => {
    const player = await makePlayer(prisma());
    const key = unique("idem");
    const send = () =>
      request(t.url).post("/api/website/create-reward-log").set("X-API-Key", keyB).set("Idempotency-Key", key).send({ playerId: player.id, rewardId: 5 });
    const first = await send();
    expect(first.status).toBe(201);
    expect((await send()).headers["idempotent-replayed"]).toBe("true");
    await prisma().$executeRaw`UPDATE idempotency_keys SET "createdAt" = now() - interval '3 hours' WHERE key = ${key}`;
    expect((await sweep()).idempotency_records).toBeGreaterThanOrEqual(1);
    expect(await prisma().idempotencyKey.count({ where: { key } })).toBe(0);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
    expect(again.body.id).not.toBe(first.body.id);
  });

  it("when events are past WEBHOOKS_RETAIN_DAYS, then they are pruned and a stream resuming after one is answered 410, not resumed further on", async () => {
    const player = await makePlayer(prisma());
    const live = await openStream(t.url, keyB, "types=reward_log.created");
    expect((await request(t.url).post("/api/website/create-reward-log").set("X-API-Key", keyB).send({ playerId: player.id, rewardId: 6 })).status).toBe(201);
    // This write's event (a stream opened just after an earlier write of this file may begin with that one's).
    const ours = () => live.events.find((e) => (JSON.parse(e.data) as { data: { playerId: number } }).data.playerId === player.id);
    await live.waitFor("an event", () => ours() !== undefined);
    await live.close();
    const event = ours()!;
    const [position] = await positionsOf(t.database.db, [event.id]);
    await prisma().$executeRaw`UPDATE webhook_events SET "createdAt" = now() - interval '31 days' WHERE id <= ${position!.id}`;
    expect((await sweep()).outbox_events).toBeGreaterThanOrEqual(1);
    expect(await prisma().webhookEvent.count({ where: { id: position!.id } })).toBe(0);
    const resumed = await openStream(t.url, keyB, "", { "Last-Event-ID": event.id });
    expect(resumed.status).toBe(410);
    expect(JSON.parse(resumed.body)).toMatchObject({ code: 410, message: expect.stringMatching(/^Last-Event-ID: the stream cannot resume after this event/) });
  });

  it("when a day's board ended longer ago than LEADERBOARD_RETAIN_DAYS, then it goes with its rows; a season stays", async () => {
    const player = await makePlayer(prisma());
    const period = async (kind: string, key: string) =>
      (await prisma().leaderboardPeriod.create({ data: { kind, key, startsAt: ago(402), endsAt: ago(401), countedFrom: ago(402), createdBy: "service" } })).id;
    const day = await period("day", unique("old-day"));
    const season = await period("season", unique("old-season"));
    await prisma().leaderboardEntry.create({ data: { periodId: day, playerId: player.id, kill: 3 } });
    expect((await sweep()).leaderboard_periods).toBeGreaterThanOrEqual(1);
    expect(await prisma().leaderboardPeriod.count({ where: { id: day } })).toBe(0);
    expect(await prisma().leaderboardEntry.count({ where: { periodId: day } })).toBe(0);
    expect(await prisma().leaderboardPeriod.count({ where: { id: season } })).toBe(1);
  });

  it("when another instance holds the sweep's lease, then this one does not sweep, and says so", async () => {
    const player = await makePlayer(prisma(), { ip: "198.51.100.40" });
    await prisma().$executeRaw`UPDATE players SET "ipSetAt" = ${ago(100)} WHERE id = ${player.id}`;
    await prisma().$executeRaw`
      INSERT INTO service_state ("name", "value") VALUES ('retention', jsonb_build_object('holder', 'other:1', 'leaseUntil', now() + interval '5 minutes'))
      ON CONFLICT ("name") DO UPDATE SET "value" = service_state."value" || EXCLUDED."value"`;
    const out = await cli(["retention", "sweep"]);
    expect([out.code, out.stderr]).toEqual([1, "Not swept: another instance is sweeping (other:1).\n"]);
    expect((await prisma().player.findUniqueOrThrow({ where: { id: player.id } })).ip).toBe("198.51.100.40");
    // Its lease ended (a crash): the next sweep takes it over.
    await prisma()
      .$executeRaw`UPDATE service_state SET "value" = "value" || jsonb_build_object('leaseUntil', now() - interval '1 second') WHERE "name" = 'retention'`;
    expect((await sweep()).player_ip).toBeGreaterThanOrEqual(1);
  });

  it("when writes are frozen, then the sweep removes nothing and says why", async () => {
    const player = await makePlayer(prisma(), { ip: "198.51.100.50" });
    await prisma().$executeRaw`UPDATE players SET "ipSetAt" = ${ago(100)} WHERE id = ${player.id}`;
    expect((await cli(["freeze", "--reason", "moving"])).code).toBe(0);
    try {
      const out = await cli(["retention", "sweep"]);
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/^Not swept: writes are frozen since .* \(moving\): nothing removed; thaw, then sweep\.\n$/);
      expect((await prisma().player.findUniqueOrThrow({ where: { id: player.id } })).ip).toBe("198.51.100.50");
    } finally {
      expect((await cli(["thaw"])).code).toBe(0);
    }
  });

  it("when an instance sweeps, then its metrics count it, and every instance reports when the last sweep ended", async () => {
    const registry = new Registry();
    const sweeper = new RetentionSweeper(prisma(), loadConfig({ NODE_ENV: "test" }), createLogger("silent"), registry);
    const first = await sweeper.sweep(true);
    expect(first.result).toBe("done");
    // Within the hour, an unforced try (the timer's) is not due.
    expect((await sweeper.sweep()).result).toBe("not_due");
    const text = await registry.metrics();
    expect(text).toMatch(/^retention_sweeps_total\{result="done"\} 1$/m);
    expect(text).toMatch(/^retention_sweeps_total\{result="not_due"\} 1$/m);
    expect(text).toMatch(/^retention_removed_total\{kind="player_ip"\} \d+$/m);
    const last = Number(/^retention_last_sweep_timestamp_seconds (\S+)$/m.exec(text)![1]);
    expect(Math.abs(last * 1000 - Date.now())).toBeLessThan(60_000);
    const status = await cli(["retention", "status"]);
    expect(status.stdout).toContain("players' IP addresses 90 days (PLAYER_IP_RETAIN_DAYS)");
    expect(status.stdout).toMatch(/Last sweep ended \S+Z on \S+: removed \d+ player_ip, /);
    await sweeper.stop();
  });
});
