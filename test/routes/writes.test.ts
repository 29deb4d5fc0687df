import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makePlayer, makeWorld } from "../helpers/fixtures.js";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-B");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const send = (method: "post" | "patch", path: string, body: unknown) =>
  request(t.url)
    [method](`/api${path}`)
    .set("X-API-Key", key)
    .send(body as object);

const BAD_DATE = "expected an ISO 8601 date-time with Z or an offset, e.g. 2026-01-31T18:00:00Z, in the years 0001 to 9999";

const answers = { video: "https://video.example/v/1", question1: "a1", question2: "a2", question3: "a3", question4: "a4", question5: "a5" };

describe("POST /form/create-form", () => {
  it("when a complete answer is sent, then 201 with its new id, stages null and comment empty by default", async () => {
    const player = await makePlayer(prisma());
    const res = await send("post", "/form/create-form", { playerId: player.id, ...answers });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual([
      "id",
      "playerId",
      "video",
      "question1",
      "question2",
      "question3",
      "question4",
      "question5",
      "stage1",
      "stage2",
      "stage3",
      "comment",
    ]);
    expect(res.body).toEqual({ id: expect.any(Number), playerId: player.id, ...answers, stage1: null, stage2: null, stage3: null, comment: "" });
    expect(await prisma().formAnswer.findUnique({ where: { id: res.body.id } })).toMatchObject({ playerId: player.id, stage1: null });
  });

  it("when stages and a comment are sent, then they are stored; a boolean comment is stored as its text", async () => {
    const player = await makePlayer(prisma());
    const res = await send("post", "/form/create-form", { playerId: player.id, ...answers, stage1: true, stage2: false, stage3: null, comment: true });
    expect(res.body).toMatchObject({ stage1: true, stage2: false, stage3: null, comment: "true" });
    const text = await send("post", "/form/create-form", { playerId: player.id, ...answers, comment: "Promising" });
    expect(text.body.comment).toBe("Promising");
  });

  it("when the player does not exist, then 400 naming it, and nothing is stored", async () => {
    const before = await prisma().formAnswer.count();
    const res = await send("post", "/form/create-form", { playerId: 2_000_000_000, ...answers });
    expect(res.body).toEqual({ code: 400, message: "playerId: no player has id 2000000000" });
    expect(await prisma().formAnswer.count()).toBe(before);
  });

  it.each([
    [{ ...answers }, "playerId: required"],
    [{ playerId: 1, ...answers, video: undefined }, "video: required"],
    [{ playerId: 1, ...answers, question3: undefined }, "question3: required"],
    [{ playerId: 1, ...answers, stage1: "yes" }, "stage1: expected true or false, received string"],
    [{ playerId: 1, ...answers, comment: 5 }, "comment: expected a string (or a boolean)"],
    [{ playerId: 1, ...answers, question1: "x".repeat(2001) }, "question1: expected at most 2000 characters"],
    [{ playerId: 0, ...answers }, "playerId: expected a positive integer"],
    [{ playerId: 1, ...answers, id: 5 }, "id: unknown field"],
  ])("when the body is %j, then 400 '%s'", async (body, message) => {
    expect((await send("post", "/form/create-form", body)).body).toEqual({ code: 400, message });
  });
});

describe("POST /website/create-reward-log", () => {
  it("when rewardedAt is sent with an offset and fractions, then 201 with it normalised to UTC whole seconds", async () => {
    const player = await makePlayer(prisma());
    const res = await send("post", "/website/create-reward-log", { playerId: player.id, rewardId: 42, rewardedAt: "2026-03-04T07:06:07.999+02:00" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), playerId: player.id, rewardId: 42, rewardedAt: "2026-03-04T05:06:07Z" });
    expect(Object.keys(res.body)).toEqual(["id", "playerId", "rewardId", "rewardedAt"]);
    const stored = await prisma().rewardLog.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored).toEqual({ id: res.body.id, playerId: player.id, rewardId: 42, rewardedAt: new Date("2026-03-04T05:06:07Z"), rewardedAtSent: true });
  });

  it("when rewardedAt is left out, then it is now", async () => {
    const player = await makePlayer(prisma());
    const before = Math.floor(Date.now() / 1000) * 1000;
    const res = await send("post", "/website/create-reward-log", { playerId: player.id, rewardId: 1 });
    expect(res.status).toBe(201);
    expect(res.body.rewardedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const at = Date.parse(res.body.rewardedAt);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it("when the same reward is recorded again for the same moment, then 409 and it is stored once", async () => {
    const player = await makePlayer(prisma());
    const body = { playerId: player.id, rewardId: 7, rewardedAt: "2026-01-01T00:00:00Z" };
    expect((await send("post", "/website/create-reward-log", body)).status).toBe(201);
    const retry = await send("post", "/website/create-reward-log", { ...body, rewardedAt: "2026-01-01T01:00:00.5+01:00" });
    expect(retry.body).toEqual({
      code: 409,
      message: `Reward log (playerId ${player.id}, rewardId 7, rewardedAt 2026-01-01T00:00:00Z) is already recorded (unique constraint reward_logs_player_reward_time_key)`,
    });
    expect(await prisma().rewardLog.count({ where: { playerId: player.id } })).toBe(1);
  });

  it("when one reward is given twice in the same second without rewardedAt (a double kill), then two logs; a retry with its Idempotency-Key, none more", async () => {
    const player = await makePlayer(prisma());
    const body = { playerId: player.id, rewardId: 11 };
    // Two at once, until both land in one second (the second may turn between them).
    let pair: request.Response[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      pair = await Promise.all([send("post", "/website/create-reward-log", body), send("post", "/website/create-reward-log", body)]);
      if (pair[0]!.body.rewardedAt === pair[1]!.body.rewardedAt) break;
    }
    expect(pair.map((r) => r.status)).toEqual([201, 201]);
    expect(pair[0]!.body.rewardedAt).toBe(pair[1]!.body.rewardedAt);
    expect(pair[0]!.body.id).not.toBe(pair[1]!.body.id);
    const before = await prisma().rewardLog.count({ where: { playerId: player.id } });
    const keyed = () => send("post", "/website/create-reward-log", body).set("Idempotency-Key", `double-kill-${player.id}`);
    const first = await keyed();
    const retried = await keyed();
    expect([first.status, retried.status]).toEqual([201, 201]);
    expect(retried.body).toEqual(first.body);
    expect(await prisma().rewardLog.count({ where: { playerId: player.id } })).toBe(before + 1);
  });

  it("when a client retries many times at once, then exactly one 201 and one stored log", async () => {
    const player = await makePlayer(prisma());
    const body = { playerId: player.id, rewardId: 9, rewardedAt: "2026-02-02T02:02:02Z" };
    const results = await Promise.all(Array.from({ length: 12 }, () => send("post", "/website/create-reward-log", body)));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    expect(await prisma().rewardLog.count({ where: { playerId: player.id } })).toBe(1);
  });

  it("when the player does not exist, then 409 naming it", async () => {
    const res = await send("post", "/website/create-reward-log", { playerId: 2_000_000_000, rewardId: 1 });
    expect(res.body).toEqual({ code: 409, message: "playerId: no player has id 2000000000" });
  });

  it.each([
    [{ rewardId: 1 }, "playerId: required"],
    [{ playerId: 1 }, "rewardId: required"],
    [{ playerId: 1, rewardId: 0 }, "rewardId: expected a positive integer"],
    [{ playerId: 1, rewardId: 1, rewardedAt: "2026-02-30T00:00:00Z" }, `rewardedAt: ${BAD_DATE}`],
    [{ playerId: 1, rewardId: 1, rewardedAt: "2026-01-01T00:00:00" }, `rewardedAt: ${BAD_DATE}`],
    [{ playerId: 1, rewardId: 1, rewardedAt: "9999-12-31T23:59:59-01:00" }, `rewardedAt: ${BAD_DATE}`],
    [{ playerId: 1, rewardId: 1, extra: true }, "extra: unknown field"],
    [{ playerId: 1, rewardId: 1, rewardedAt: 1735689600 }, "rewardedAt: expected an ISO 8601 date-time string, received number"],
    [{ playerId: 1, rewardId: 1, rewardedAt: null }, "rewardedAt: expected an ISO 8601 date-time string, received null"],
  ])("when the body is %j, then 400 '%s'", async (body, message) => {
    expect((await send("post", "/website/create-reward-log", body)).body).toEqual({ code: 400, message });
  });

  it("when the old path /website/create-reward is used, then 404", async () => {
    expect((await send("post", "/website/create-reward", { playerId: 1, rewardId: 1 })).status).toBe(404);
  });
});

const WORLD_SHAPE = [
  "id",
  "name",
  "ownerId",
  "type",
  "state",
  "lastUsed",
  "status",
  "spawnLocation",
  "gameruleRandomTickSpeed",
  "gameruleDaylightCycle",
  "gamerulePvp",
  "gamerulePlayerDamage",
  "tag",
];

describe("PATCH /freebuild/update-world", () => {
  it('when gamerules come as text "true"/"false", then they are stored and written as booleans', async () => {
    const w = await makeWorld(prisma());
    const res = await send("patch", "/freebuild/update-world", { id: w.id, gamerulePvp: "false", gameruleDaylightCycle: "true", gamerulePlayerDamage: false });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(WORLD_SHAPE);
    expect(res.body).toMatchObject({ gamerulePvp: false, gameruleDaylightCycle: true, gamerulePlayerDamage: false, name: w.name });
    expect(await prisma().world.findUnique({ where: { id: w.id } })).toMatchObject({ gamerulePvp: false });
  });

  it("when state, status, owner and lastUsed change, then the whole world comes back, lastUsed in UTC whole seconds", async () => {
    const w = await makeWorld(prisma());
    const owner = await makePlayer(prisma());
    const res = await send("patch", "/freebuild/update-world", {
      id: w.id,
      state: "loaded",
      status: "PRIVATE",
      ownerId: owner.id,
      lastUsed: "2026-06-01T12:00:00.250-02:00",
    });
    expect(res.body).toEqual({
      id: w.id,
      name: w.name,
      ownerId: owner.id,
      type: "NETHER",
      state: "loaded",
      lastUsed: "2026-06-01T14:00:00Z",
      status: "PRIVATE",
      spawnLocation: "0,64,0",
      gameruleRandomTickSpeed: 3,
      gameruleDaylightCycle: true,
      gamerulePvp: true,
      gamerulePlayerDamage: true,
      tag: "event",
    });
  });

  it("when a date is at the edge of what the format can write, then it is stored and written exactly", async () => {
    const w = await makeWorld(prisma());
    for (const [input, output] of [
      ["0050-06-01T00:00:00Z", "0050-06-01T00:00:00Z"],
      ["9999-12-31T23:59:59+01:00", "9999-12-31T22:59:59Z"],
    ]) {
      const res = await send("patch", "/freebuild/update-world", { id: w.id, lastUsed: input });
      expect(res.body.lastUsed, input).toBe(output);
      expect((await send("patch", "/freebuild/update-world", { id: w.id, tag: "after" })).status).toBe(200);
    }
  });

  it('when spawnLocation and tag are null or "null", then they are cleared', async () => {
    const w = await makeWorld(prisma());
    const res = await send("patch", "/freebuild/update-world", { id: w.id, spawnLocation: null, tag: "null" });
    expect(res.body).toMatchObject({ spawnLocation: null, tag: null });
  });

  it("when the owner does not exist, then 400 naming it, and the other fields are not changed either", async () => {
    const w = await makeWorld(prisma());
    const res = await send("patch", "/freebuild/update-world", { id: w.id, name: "Renamed", ownerId: 2_000_000_000 });
    expect(res.body).toEqual({ code: 400, message: "ownerId: no player has id 2000000000" });
    expect((await prisma().world.findUnique({ where: { id: w.id } }))?.name).toBe(w.name);
  });

  it("when the world does not exist, then 404 'World not found'", async () => {
    expect((await send("patch", "/freebuild/update-world", { id: 2_000_000_000, state: "x" })).body).toEqual({ code: 404, message: "World not found" });
  });

  it("when two clients change different fields at once, then both changes survive", async () => {
    const w = await makeWorld(prisma());
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([
        send("patch", "/freebuild/update-world", { id: w.id, gameruleRandomTickSpeed: round }),
        send("patch", "/freebuild/update-world", { id: w.id, tag: `t${round}` }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(await prisma().world.findUnique({ where: { id: w.id } })).toMatchObject({ gameruleRandomTickSpeed: round, tag: `t${round}` });
    }
  });

  it.each([
    [{ id: 1 }, "body: expected at least one field to change besides id"],
    [{ id: 1, gamerulePvp: "yes" }, 'gamerulePvp: expected true, false, "true" or "false"'],
    [{ id: 1, gamerulePvp: null }, 'gamerulePvp: expected true, false, "true" or "false"'],
    [{ id: 1, type: "" }, "type: expected a non-empty string"],
    [{ id: 1, state: "x".repeat(33) }, "state: expected at most 32 characters"],
    [{ id: 1, name: null }, "name: expected a string, received null"],
    [{ id: 1, gameruleRandomTickSpeed: -1 }, "gameruleRandomTickSpeed: expected 0 or more"],
    [{ id: 1, lastUsed: "yesterday" }, `lastUsed: ${BAD_DATE}`],
    [{ id: 1, lastUsed: "10000-01-01T00:00:00Z" }, `lastUsed: ${BAD_DATE}`],
    [{ id: 1, tag: "\ud800x" }, "tag: must be well-formed Unicode (no lone surrogate)"],
    [{ id: 1, ownerId: "2" }, "ownerId: expected an integer, received string"],
    [{ id: 1, seed: 42 }, "seed: unknown field; body: expected at least one field to change besides id"],
  ])("when the body is %j, then 400 '%s'", async (body, message) => {
    expect((await send("patch", "/freebuild/update-world", body)).body).toEqual({ code: 400, message });
  });
});
