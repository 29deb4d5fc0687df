import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer, unique } from "./helpers/fixtures.js";
import { REDIS_URL, redisAvailable } from "./helpers/redis.js";

/**
 * Behind a trusted proxy (TRUST_PROXY=loopback: the test connects from
 * 127.0.0.1), req.ip is the X-Forwarded-For text the client sent: anything
 * but an IP address must count as no address, wherever the address goes.
 */

const FORGED = ["x".repeat(80), `gsk_${"Q".repeat(43)}`, "<svg onload=alert(1)>", "fe80::1%<svg/onload=alert(1)>", "198.51.100.7 ; drop"];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: "loopback" } });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;

describe("a forwarded client address that is not an IP address", () => {
  it("when a write or a key rotation comes with it, then it succeeds, and its audit entry has no client address", async () => {
    const player = await makePlayer(prisma());
    for (const [i, forged] of FORGED.entries()) {
      const requestId = `forged-${i}-${randomBytes(4).toString("hex")}`;
      const write = await request(t.url)
        .post("/api/website/create-reward-log")
        .set({ "X-API-Key": key, "X-Forwarded-For": forged, "X-Request-Id": requestId })
        .send({ playerId: player.id, rewardId: 100 + i });
      expect(write.status, forged).toBe(201);
      const username = unique("fwd-");
      await t.key(username);
      const rotated = await request(t.url)
        .post("/api/admin/users/rotate-key")
        .set({ "X-API-Key": key, "X-Forwarded-For": forged, "X-Request-Id": `${requestId}-r` })
        .send({ username, graceSeconds: 0 });
      expect(rotated.status, forged).toBe(200);
      const entries = await prisma().auditLog.findMany({ where: { requestId: { in: [requestId, `${requestId}-r`] } } });
      expect(
        entries.map((e) => e.clientAddress),
        forged,
      ).toEqual([null, null]);
    }
    const stored = await prisma().$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM audit_log WHERE "clientAddress" LIKE '%gsk_%' OR "clientAddress" LIKE '%<%' OR length("clientAddress") > 45`;
    expect(stored[0]!.n).toBe(0);
  });

  it("when an address comes, then it is kept as the client address", async () => {
    const player = await makePlayer(prisma());
    const requestId = `real-${randomBytes(4).toString("hex")}`;
    await request(t.url)
      .post("/api/website/create-reward-log")
      .set({ "X-API-Key": key, "X-Forwarded-For": "2001:db8::7", "X-Request-Id": requestId })
      .send({ playerId: player.id, rewardId: 1 })
      .expect(201);
    expect((await prisma().auditLog.findFirstOrThrow({ where: { requestId } })).clientAddress).toBe("2001:db8::7");
  });

  it.skipIf(!redisAvailable)(
    "when bad keys come with a different 8 KB forwarded text each, then Redis holds one counter for them all, not one each",
    async () => {
      const prefix = `fwd-${randomBytes(4).toString("hex")}:`;
      const shared = await startTestApp({
        database: t.database,
        env: { TRUST_PROXY: "loopback", REDIS_URL, REDIS_KEY_PREFIX: prefix, AUTH_FAILURES_PER_MINUTE: "1000" },
      });
      const redis = new Redis(REDIS_URL);
      try {
        const badKey = `gsk_${"B".repeat(43)}`;
        for (let i = 0; i < 20; i++) {
          const res = await request(shared.url)
            .get("/api/parkour/get-all-maps")
            .set({ "X-API-Key": badKey, "X-Forwarded-For": `${i}-${"z".repeat(8_000)}` });
          expect(res.status).toBe(401);
        }
        const keys = await redis.keys(`${prefix}*`);
        expect(keys.length).toBeLessThan(5);
        const bytes = await Promise.all(keys.map((k) => redis.memory("USAGE", k)));
        expect(bytes.reduce<number>((n, b) => n + Number(b ?? 0), 0)).toBeLessThan(8_000);
      } finally {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
        await shared.close();
      }
    },
  );
});
