import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePeriods } from "../src/leaderboards/periods.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer, makeWorld, unique } from "./helpers/fixtures.js";

/**
 * A player's personal data, exported (issue 51): POST /api/admin/players/export, group A. Every row that names
 * them and nothing of anyone else's, with a manifest; recorded in the audit log; never stored for a replay.
 */
let t: TestApp;
let keyA: string;
let keyB: string;
const answers = { video: "https://video.example/v/1", question1: "a1", question2: "a2", question3: "a3", question4: "a4", question5: "a5" };

beforeAll(async () => {
  t = await startTestApp();
  keyA = await t.key("user-A");
  keyB = await t.key("user-B");
});
afterAll(() => t.close());

const post = (key: string, path: string, body: object) => request(t.url).post(`/api${path}`).set("X-API-Key", key).send(body);
const exportOf = (body: object, key = keyA) => post(key, "/admin/players/export", body);

describe("POST /api/admin/players/export", () => {
  it("when group A exports a player by pseudo (any case) or by id, then every row that names them comes, with its manifest, and no one else's", async () => {
    const prisma = t.database.db.prisma;
    const steve = await makePlayer(prisma, { pseudo: unique("Steve"), ip: "198.51.100.7", chatId: "chat-7" });
    const other = await makePlayer(prisma);
    await ensurePeriods(prisma, "UTC"); // this day, week and month count the gains: steve's 12 kills in each
    await prisma.infectedStats.create({ data: { playerId: steve.id, kill: 12 } });
    await prisma.infectedStats.create({ data: { playerId: other.id, kill: 3 } });
    const world = await makeWorld(prisma, { ownerId: steve.id });
    for (const p of [steve, other]) {
      expect((await post(keyB, "/website/create-reward-log", { playerId: p.id, rewardId: 42 })).status).toBe(201);
      expect((await post(keyB, "/form/create-form", { playerId: p.id, ...answers })).status).toBe(201);
    }
    const res = await exportOf({ pseudo: steve.pseudo.toUpperCase() });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.manifest).toEqual({
      format: "community-player-export",
      version: 1,
      madeAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      madeBy: "user-A",
      player: { id: steve.id, pseudo: steve.pseudo },
      parts: expect.objectContaining({ player: expect.stringContaining("every field"), events: expect.any(String) }),
      counts: { player: 1, infectedStats: 1, leaderboards: 3, formAnswers: 1, rewardLogs: 1, worlds: 1, auditEntries: 2, events: 2 },
    });
    // The API's field names, the sensitive ones included.
    expect(doc.player).toMatchObject({ id: steve.id, pseudo: steve.pseudo, token: "secret-token", ip: "198.51.100.7", chatId: "chat-7" });
    expect(doc.infectedStats).toMatchObject({ playerId: steve.id, kill: 12 });
    // Their gains per leaderboard period: the period named, every statistic; no one else's.
    const current = await prisma.leaderboardPeriod.findMany({
      where: { kind: { in: ["day", "week", "month"] }, startsAt: { lte: new Date() }, endsAt: { gt: new Date() } },
    });
    const gains = doc.leaderboards as { period: { kind: string; key: string; startsAt: string; endsAt: string }; kill: number; death: number }[];
    expect(gains.map((g) => [g.period.kind, g.period.key, g.kill, g.death]).sort()).toEqual(current.map((p) => [p.kind, p.key, 12, 0]).sort());
    expect(gains.map((g) => g.period.startsAt)).toEqual(gains.map((g) => g.period.startsAt).sort());
    expect(gains[0]!.period.startsAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(doc.formAnswers.map((f: { playerId: number }) => f.playerId)).toEqual([steve.id]);
    expect(doc.rewardLogs).toEqual([{ id: expect.any(Number), playerId: steve.id, rewardId: 42, rewardedAt: expect.any(String) }]);
    expect(doc.worlds.map((w: { id: number }) => w.id)).toEqual([world.id]);
    expect(doc.auditEntries.map((a: { action: string }) => a.action).sort()).toEqual(["form.create", "reward_log.create"]);
    expect(doc.events.map((e: { type: string; data: { playerId: number } }) => [e.type, e.data.playerId]).sort()).toEqual([
      ["form.created", steve.id],
      ["reward_log.created", steve.id],
    ]);
    expect(JSON.stringify(doc)).not.toContain(other.pseudo);
    // By id: the same rows; and the first export is now in the audit log, on the player.
    const byId = await exportOf({ id: steve.id });
    expect(byId.body.player).toEqual(doc.player);
    expect(byId.body.auditEntries).toContainEqual(
      expect.objectContaining({ actor: "user-A", action: "player.export", target: `player:${steve.id}`, changes: doc.manifest.counts }),
    );
  });

  it.each([
    [{}, 400, "id, pseudo: send one of them"],
    [{ id: 1, pseudo: "Steve" }, 400, "id, pseudo: send one of them"],
    [{ id: 0 }, 400, "id: expected a positive integer"],
    [{ id: 2_000_000_000 }, 404, "Player not found"],
    [{ pseudo: "nobody-at-all" }, 404, "Player not found"],
  ])("when the body is %j, then %i '%s', and nothing is recorded", async (body, status, message) => {
    const before = await t.database.db.prisma.auditLog.count({ where: { action: "player.export" } });
    const res = await exportOf(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ code: status, message: expect.stringContaining(message) });
    expect(await t.database.db.prisma.auditLog.count({ where: { action: "player.export" } })).toBe(before);
  });

  it("when group B (the website back-end, serving a player's request) asks, then the same; group C or D, 403", async () => {
    const p = await makePlayer(t.database.db.prisma);
    expect((await exportOf({ id: p.id }, keyB)).body.manifest).toMatchObject({ madeBy: "user-B", player: { id: p.id } });
    for (const user of ["user-C", "user-D"]) expect((await exportOf({ id: p.id }, await t.key(user))).status).toBe(403);
  });

  it("when it is resent with its Idempotency-Key, then 409, and the export was never stored", async () => {
    const p = await makePlayer(t.database.db.prisma, { token: "token-not-to-keep" });
    const key = unique("export-");
    const first = await exportOf({ id: p.id }).set("Idempotency-Key", key);
    expect(first.status).toBe(200);
    const again = await exportOf({ id: p.id }).set("Idempotency-Key", key);
    expect(again.status).toBe(409);
    const kept = await t.database.db.prisma.$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM idempotency_keys WHERE "responseBody" LIKE '%token-not-to-keep%'`;
    expect(kept).toEqual([{ n: 0 }]);
  });
});
