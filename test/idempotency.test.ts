import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineRoute } from "../src/http/route.js";
import { apiRoutes } from "../src/resources/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";

/** A write that fails with a 500 the first time it is called, then succeeds: a server failure must not be kept. */
let flakyCalls = 0;
const probes = [
  defineRoute({
    method: "POST",
    path: "/probe/flaky-write",
    summary: "writes a parkour map, failing the first time",
    description: "test probe",
    response: z.unknown(),
    successStatus: 201,
    callers: ["B"],
    body: z.strictObject({ name: z.string() }),
    async handler({ body }, { db }) {
      const map = await db.parkourMap.create({ data: { name: body.name } });
      if (flakyCalls++ === 0) throw new Error("server failure after the write");
      return { id: map.id, name: map.name };
    },
  }),
];

/** The app's clock, moved by the tests that need a day to pass. */
let clock = Date.now();
let t: TestApp;
let key: string;
let otherKey: string;
beforeAll(async () => {
  t = await startTestApp({ routes: [...apiRoutes, ...probes], now: () => new Date(clock) });
  key = await t.key("user-B");
  otherKey = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const post = (path: string, body: unknown, idempotencyKey?: string, apiKey = key) => {
  const r = request(t.url).post(`/api${path}`).set("X-API-Key", apiKey);
  if (idempotencyKey !== undefined) r.set("Idempotency-Key", idempotencyKey);
  return r.send(body as object);
};
const rewardLogs = (playerId: number) => prisma().rewardLog.count({ where: { playerId } });

describe("Idempotency-Key on the POST routes", () => {
  it("when the same key and body are sent twice, then the second answer is the first one, byte for byte, and one record exists", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const first = await post("/website/create-reward-log", { playerId: player.id, rewardId: 5 }, k);
    expect(first.status).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    // A second later, and with the fields in another order: still the same request.
    clock += 1000;
    const again = await post("/website/create-reward-log", { rewardId: 5, playerId: player.id }, k);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
    expect(again.text).toBe(first.text);
    expect(await rewardLogs(player.id)).toBe(1);
  });

  it("when form answers are resent with their key, then one answer is stored", async () => {
    const player = await makePlayer(prisma());
    const body = { playerId: player.id, video: "v", question1: "a", question2: "b", question3: "c", question4: "d", question5: "e" };
    const k = randomUUID();
    const [first, second] = [await post("/form/create-form", body, k), await post("/form/create-form", body, k)];
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.text).toBe(first.text);
    expect(await prisma().formAnswer.count({ where: { playerId: player.id } })).toBe(1);
  });

  it("when the same key comes with another body or on another route, then 422 and nothing is done", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    expect((await post("/website/create-reward-log", { playerId: player.id, rewardId: 1 }, k)).status).toBe(201);
    const otherBody = await post("/website/create-reward-log", { playerId: player.id, rewardId: 2 }, k);
    expect(otherBody.status).toBe(422);
    expect(otherBody.body).toEqual({
      code: 422,
      message: "Idempotency-Key already used in the last 24 hours with another body on POST /website/create-reward-log: use a new key for a new request",
    });
    const otherRoute = await post(
      "/form/create-form",
      { playerId: player.id, video: "v", question1: "", question2: "", question3: "", question4: "", question5: "" },
      k,
    );
    expect(otherRoute.status).toBe(422);
    expect(otherRoute.body.message).toBe(
      "Idempotency-Key already used in the last 24 hours on POST /website/create-reward-log: use a new key for a new request",
    );
    expect(await rewardLogs(player.id)).toBe(1);
    expect(await prisma().formAnswer.count({ where: { playerId: player.id } })).toBe(0);
  });

  it("when another API user sends the same key, then its request is its own", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const mine = await post("/website/create-reward-log", { playerId: player.id, rewardId: 1, rewardedAt: "2026-01-01T00:00:00Z" }, k);
    const theirs = await post("/website/create-reward-log", { playerId: player.id, rewardId: 2 }, k, otherKey);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers["idempotent-replayed"]).toBeUndefined();
    expect(await rewardLogs(player.id)).toBe(2);
  });

  it("when 20 identical requests with one key arrive at once, then one record is created and all get the same answer", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post("/website/create-reward-log", { playerId: player.id, rewardId: 77 }, k)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers["idempotent-replayed"] === undefined)).toHaveLength(1);
    expect(await rewardLogs(player.id)).toBe(1);
    expect(await prisma().auditLog.count({ where: { action: "reward_log.create", target: `reward_log:${answers[0]!.body.id}` } })).toBe(1);
  });

  it("when a request is refused with a 400, then nothing is kept: the fixed request with the same key runs", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const invalid = await post("/website/create-reward-log", { playerId: player.id, rewardId: 0 }, k);
    expect(invalid.status).toBe(400);
    const fixed = await post("/website/create-reward-log", { playerId: player.id, rewardId: 3 }, k);
    expect(fixed.status).toBe(201);
    expect(fixed.headers["idempotent-replayed"]).toBeUndefined();
    // A 400 found by the handler (an unknown player) is not kept either.
    const k2 = randomUUID();
    const answers = { video: "v", question1: "", question2: "", question3: "", question4: "", question5: "" };
    expect((await post("/form/create-form", { playerId: 2_000_000_000, ...answers }, k2)).status).toBe(400);
    expect((await post("/form/create-form", { playerId: player.id, ...answers }, k2)).status).toBe(201);
    expect(await prisma().idempotencyKey.count({ where: { key: { in: [k, k2] } } })).toBe(2);
  });

  it("when the first request fails on the server, then nothing is kept: the retry with the same key runs", async () => {
    const k = randomUUID();
    const name = `flaky-${k}`;
    const failed = await post("/probe/flaky-write", { name }, k);
    expect(failed.status).toBe(500);
    expect(await prisma().parkourMap.count({ where: { name } })).toBe(0);
    const retried = await post("/probe/flaky-write", { name }, k);
    expect(retried.status).toBe(201);
    expect(await prisma().parkourMap.count({ where: { name } })).toBe(1);
  });

  it("when the first answer was a 409, then the retry with the key gets the same 409 and nothing more is stored", async () => {
    const player = await makePlayer(prisma());
    const body = { playerId: player.id, rewardId: 9, rewardedAt: "2026-02-02T02:02:02Z" };
    expect((await post("/website/create-reward-log", body)).status).toBe(201);
    const k = randomUUID();
    const conflict = await post("/website/create-reward-log", body, k);
    expect(conflict.status).toBe(409);
    // Gone or not, the record that conflicted does not change the replayed answer.
    await prisma().rewardLog.deleteMany({ where: { playerId: player.id } });
    const replay = await post("/website/create-reward-log", body, k);
    expect(replay.status).toBe(409);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.text).toBe(conflict.text);
    // The replay names the error as the first answer did: a duplicate, not a missing player (the row is gone now).
    expect(conflict.headers["error-name"]).toBe("DUPLICATE");
    expect(replay.headers["error-name"]).toBe("DUPLICATE");
    expect(await rewardLogs(player.id)).toBe(0);
  });

  // Expired keys' rows are deleted by the retention sweep (test/retention.test.ts), not by requests.
  it("when a key is older than 24 hours, then it counts as new, and its row holds the new answer", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const first = await post("/website/create-reward-log", { playerId: player.id, rewardId: 11 }, k);
    expect(first.status).toBe(201);

    clock += 24 * 3600 * 1000 + 1000;
    const later = await post("/website/create-reward-log", { playerId: player.id, rewardId: 11 }, k);
    expect(later.status).toBe(201);
    expect(later.headers["idempotent-replayed"]).toBeUndefined();
    expect(later.body.id).not.toBe(first.body.id);
    expect(await rewardLogs(player.id)).toBe(2);
    const kept = await prisma().idempotencyKey.findMany({ where: { key: k } });
    expect(kept.map((r) => r.responseBody)).toEqual([later.text]);
  });

  it("when a key's row is past 24 hours but not yet purged, then the key counts as new", async () => {
    const player = await makePlayer(prisma());
    const k = randomUUID();
    const first = await post("/website/create-reward-log", { playerId: player.id, rewardId: 21 }, k);
    await prisma().idempotencyKey.updateMany({ where: { key: k }, data: { createdAt: new Date(clock - 24 * 3600 * 1000 - 1) } });
    clock += 1000;
    const later = await post("/website/create-reward-log", { playerId: player.id, rewardId: 22 }, k);
    expect([first.status, later.status]).toEqual([201, 201]);
    expect(later.headers["idempotent-replayed"]).toBeUndefined();
    expect(await rewardLogs(player.id)).toBe(2);
  });

  it("when /inscription is resent with its key, then the user exists once, the key is never stored, and the replay is a 409 saying so", async () => {
    const k = randomUUID();
    const first = await post("/inscription", { username: "idem-user" }, k);
    expect(first.status).toBe(201);
    const replay = await post("/inscription", { username: "idem-user" }, k);
    expect(replay.status).toBe(409);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["error-name"]).toBeUndefined();
    expect(replay.headers["error-name"]).toBe("SECRET_NOT_REPLAYED");
    expect(replay.body.message).toBe(
      "Username 'idem-user' was registered by an earlier request with this Idempotency-Key; its API key was shown only in that " +
        "answer and is not kept: ask an operator for a new one (user rotate)",
    );
    expect(await prisma().apiUser.count({ where: { username: "idem-user" } })).toBe(1);
    const stored = await prisma().idempotencyKey.findMany({ where: { key: k } });
    expect(JSON.stringify(stored)).not.toContain(first.body.apiKey);
    expect(JSON.stringify(stored)).not.toContain((first.body.apiKey as string).slice(8));
  });

  it.each([
    ["x".repeat(256), "expected 1 to 255 printable ASCII characters"],
    ["", "expected 1 to 255 printable ASCII characters"],
    ["tab\there", "expected 1 to 255 printable ASCII characters"],
  ])("when the key is %j, then 400 naming the header", async (value, message) => {
    const res = await post("/website/create-reward-log", { playerId: 1, rewardId: 1 }, value);
    expect(res.body).toEqual({ code: 400, message: `Idempotency-Key: ${message}` });
  });

  it("when the header is sent twice, then 400; on a PATCH it is ignored", async () => {
    const twice = await request(t.url)
      .post("/api/website/create-reward-log")
      .set("X-API-Key", key)
      // Two header lines (Node's http client sends an array so); typed as one value by supertest.
      .set("Idempotency-Key", ["a", "b"] as unknown as string)
      .send({ playerId: 1, rewardId: 1 });
    expect(twice.body).toEqual({ code: 400, message: "Idempotency-Key: send it once" });
    const k = randomUUID();
    const patch = () =>
      request(t.url).patch("/api/freebuild/update-world").set("X-API-Key", key).set("Idempotency-Key", k).send({ id: 2_000_000_000, tag: "x" });
    expect((await patch()).status).toBe(404);
    expect((await patch()).headers["idempotent-replayed"]).toBeUndefined();
  });

  it("when the key holds an API key (the caller's own, or one inside other text), then 400 naming the header, nothing is written and no row keeps it", async () => {
    const player = await makePlayer(prisma());
    for (const k of [key, `retry-${otherKey}`, `${key.slice(0, 12)}-attempt-1`]) {
      const refused = await post("/website/create-reward-log", { playerId: player.id, rewardId: 5 }, k);
      expect(refused.status, k).toBe(400);
      expect(refused.body.message).toMatch(/^Idempotency-Key: /);
      expect(refused.text).not.toContain(k);
    }
    expect(await rewardLogs(player.id)).toBe(0);
    const kept = await prisma().$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key ILIKE '%gsk%'`;
    expect(kept[0]!.n).toBe(0);
  });

  it("when 255 printable characters are sent, then the key is accepted", async () => {
    const player = await makePlayer(prisma());
    const k = `${randomUUID()} ~!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}`.padEnd(255, "z");
    const first = await post("/website/create-reward-log", { playerId: player.id, rewardId: 4 }, k);
    const again = await post("/website/create-reward-log", { playerId: player.id, rewardId: 4 }, k);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers["idempotent-replayed"]).toBe("true");
  });
});
