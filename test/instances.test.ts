import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/db/database.js";
import { readMigrations } from "../src/db/migrate.js";
import { ApiUsers } from "../src/users/users.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { type ServiceProcess, spawnService } from "./helpers/process.js";
import { REDIS_URL, redisAvailable } from "./helpers/redis.js";

/**
 * Two instances of the real server (two processes, two ports) on one
 * PostgreSQL and one Redis: what must be shared is shared — migrations,
 * rate-limit counters, key revocation and rotation, idempotency records.
 */
const root = path.resolve(import.meta.dirname, "..");
const LIMIT = 60;
/**
 * A change of keys reaches the other instance by a notification; the key caches' own expiry, their last
 * resort, is a minute (KeyCache). A bound between the two, however slow the machine: not a measure.
 */
const NOTIFIED_WITHIN_MS = 20_000;
const redisUp = redisAvailable;

interface Instance {
  service: ServiceProcess;
  url: string;
}

describe.skipIf(!onPostgres || !redisUp)("two instances on one PostgreSQL and one Redis", () => {
  const prefix = `instances-${randomBytes(4).toString("hex")}:`;
  let database: { url: string; drop(): Promise<void> };
  let direct: Database;
  let users: ApiUsers;
  let a: Instance;
  let b: Instance;
  /** The key of user-A, printed by whichever instance created it on the empty database. */
  let firstKey: string;

  async function start(): Promise<Instance> {
    const service = spawnService({
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      CALLERS_USER_C: "user-C,grace-user,revoked-in-grace,used-user",
    });
    return { service, url: `http://127.0.0.1:${await service.port()}` };
  }

  beforeAll(async () => {
    database = await createServerDatabase();
    // Both at once, on an empty database: they race for the migrations.
    [a, b] = await Promise.all([start(), start()]);
    direct = openDatabase({ kind: "postgres", url: database.url, poolMax: 2 });
    users = new ApiUsers(direct.prisma);
    firstKey = /gsk_[A-Za-z0-9_-]{43}/.exec(a.service.output() + b.service.output())![0];
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a, b].map((instance) => instance?.service.stop()));
    await direct?.close();
    await database?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  const get = (instance: Instance, path: string, key: string) => fetch(`${instance.url}${path}`, { headers: { "X-API-Key": key } });

  it("when both start at once on an empty database, then each migration is applied once", async () => {
    const local = await readMigrations();
    const applied = (o: string) => o.split("\n").filter((l) => l.includes('"msg":"migration applied"')).length;
    expect(applied(a.service.output()) + applied(b.service.output())).toBe(local.length);
    const rows = await direct.prisma.$queryRaw<{ migration_name: string }[]>`SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`;
    expect(rows.map((r) => r.migration_name)).toEqual(local.map((m) => m.name));
  });

  it("when a user's requests are spread over both, then they count against one budget, in Redis", async () => {
    const key = (await users.create("user_A")).apiKey;
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await get(i % 2 ? b : a, "/api/parkour/get-all-maps", key)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const overA = await get(a, "/api/parkour/get-all-maps", key);
    const overB = await get(b, "/api/parkour/get-all-maps", key);
    expect([overA.status, overB.status]).toEqual([429, 429]);
    expect(overB.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("when a key is revoked, then it stops working on both instances, though both had it cached (notified, not left to the cache's expiry)", async () => {
    const key = (await users.create("user-C")).apiKey;
    // Cached on both: each has answered with it.
    for (const instance of [a, b]) expect((await get(instance, "/api/player/get-all-players", key)).status).toBe(200);
    const revokedAt = Date.now();
    await users.revoke("user-C");
    const took = await Promise.all(
      [a, b].map(async (instance) => {
        while ((await get(instance, "/api/player/get-all-players", key)).status !== 401) {
          if (Date.now() - revokedAt > NOTIFIED_WITHIN_MS) throw new Error("not notified: still accepted, left to the cache's expiry");
          await new Promise((r) => setTimeout(r, 20));
        }
        return Date.now() - revokedAt;
      }),
    );
    mkdirSync(path.join(root, "test-output"), { recursive: true });
    writeFileSync(path.join(root, "test-output", "instances.json"), `${JSON.stringify({ revocationSeenAfterMs: took }, null, 2)}\n`);
  });

  it("when a key is rotated without grace, then the old one stops and the new one works on both instances (notified, not left to the cache's expiry)", async () => {
    const old = (await users.create("user-D")).apiKey;
    for (const instance of [a, b]) expect((await get(instance, "/api/player/get-all-players", old)).status).toBe(200);
    const rotatedAt = Date.now();
    const fresh = (await users.rotate("user-D", undefined, 0)).apiKey;
    for (const instance of [a, b]) {
      while ((await get(instance, "/api/player/get-all-players", old)).status !== 401) {
        expect(Date.now() - rotatedAt, "not notified: left to the cache's expiry").toBeLessThan(NOTIFIED_WITHIN_MS);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await get(instance, "/api/player/get-all-players", fresh)).status).toBe(200);
    }
  });

  it("when one Idempotency-Key is sent to both instances, at once or one after the other, then one effect and one answer", async () => {
    const key = (await users.create("user-B")).apiKey;
    const player = await makePlayer(direct.prisma);
    const post = (instance: Instance, idempotencyKey: string, rewardId: number) =>
      fetch(`${instance.url}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": key, "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
        body: JSON.stringify({ playerId: player.id, rewardId }),
      });

    const first = await post(a, "retry-1", 1);
    const retry = await post(b, "retry-1", 1);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(await first.text());

    const together = randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? b : a, together, 2)));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(bodies).size).toBe(1);

    expect(await direct.prisma.rewardLog.count({ where: { playerId: player.id, rewardId: 1 } })).toBe(1);
    expect(await direct.prisma.rewardLog.count({ where: { playerId: player.id, rewardId: 2 } })).toBe(1);
  });

  it("when a list is asked of either instance, then both give the same ETag, and a 304 for the other's tag", async () => {
    const key = firstKey;
    const fromA = await get(a, "/api/player/get-all-players", key);
    const tag = fromA.headers.get("etag")!;
    expect(tag).toBeTruthy();
    const fromB = await fetch(`${b.url}/api/player/get-all-players`, { headers: { "X-API-Key": key, "If-None-Match": tag } });
    expect(fromB.status).toBe(304);
  });

  it("when a key is rotated with a grace period, then both keys work on both instances until its expiry, though cached, then only the new one", async () => {
    const old = (await users.create("grace-user")).apiKey;
    for (const instance of [a, b]) expect((await get(instance, "/api/player/get-all-players", old)).status).toBe(200);
    const { apiKey: fresh, user } = await users.rotate("grace-user", undefined, 3);
    const expiresAt = user.previousKeyExpiresAt!.getTime();
    // Both keys, on both instances, several times: the old one is now cached with its expiry.
    while (Date.now() < expiresAt - 1_000) {
      for (const instance of [a, b]) {
        // Answered before the expiry, the old key must have passed (a loaded machine may answer after it).
        const status = (await get(instance, "/api/player/get-all-players", old)).status;
        if (Date.now() < expiresAt) expect(status).toBe(200);
        expect((await get(instance, "/api/player/get-all-players", fresh)).status).toBe(200);
      }
      // Under the per-user limit (LIMIT a minute).
      await new Promise((r) => setTimeout(r, 400));
    }
    // Polled from just before the expiry: the old key's 200s count against the user's budget too.
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now() - 100)));
    await Promise.all(
      [a, b].map(async (instance) => {
        while ((await get(instance, "/api/player/get-all-players", old)).status !== 401) {
          expect(Date.now() - expiresAt, "left to the cache's expiry").toBeLessThan(NOTIFIED_WITHIN_MS);
          await new Promise((r) => setTimeout(r, 20));
        }
      }),
    );
    for (const instance of [a, b]) expect((await get(instance, "/api/player/get-all-players", fresh)).status).toBe(200);
  });

  it("when a user with a key in its grace period is revoked, then both keys stop on both instances (notified, not left to the cache's expiry)", async () => {
    const old = (await users.create("revoked-in-grace")).apiKey;
    const fresh = (await users.rotate("revoked-in-grace", undefined, 3_600)).apiKey;
    for (const instance of [a, b]) for (const key of [old, fresh]) expect((await get(instance, "/api/player/get-all-players", key)).status).toBe(200);
    const revokedAt = Date.now();
    await users.revoke("revoked-in-grace");
    for (const instance of [a, b]) {
      for (const key of [old, fresh]) {
        while ((await get(instance, "/api/player/get-all-players", key)).status !== 401) {
          expect(Date.now() - revokedAt, "not notified: left to the cache's expiry").toBeLessThan(NOTIFIED_WITHIN_MS);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  });

  // Last: it stops both instances, which write the minutes they noted as they stop.
  it("when the old and the new key are used on different instances, then each key's last use is recorded to the minute", async () => {
    const old = (await users.create("used-user")).apiKey;
    const fresh = (await users.rotate("used-user", undefined, 600)).apiKey;
    const minute = (t: number) => Math.floor(t / 60_000) * 60_000;
    const from = minute(Date.now());
    for (let i = 0; i < 5; i++) {
      expect((await get(a, "/api/player/get-all-players", old)).status).toBe(200);
      expect((await get(b, "/api/player/get-all-players", fresh)).status).toBe(200);
    }
    await Promise.all([a.service.stop(), b.service.stop()]);
    const to = minute(Date.now());
    const [after] = await direct.prisma.apiUser.findMany({ where: { username: "used-user" } });
    for (const at of [after!.keyLastUsedAt, after!.previousKeyLastUsedAt]) {
      expect(at).not.toBeNull();
      expect(at!.getTime() % 60_000).toBe(0);
      expect(at!.getTime()).toBeGreaterThanOrEqual(from);
      expect(at!.getTime()).toBeLessThanOrEqual(to);
    }
  });
});
