import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyCache } from "../src/auth/key-cache.js";
import { hashApiKey } from "../src/core/api-keys.js";
import { KeyUsage } from "../src/users/key-usage.js";
import { ApiUsers } from "../src/users/users.js";
import { startTestApp } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/** Rotation with a grace period and last use, on one process (two instances: test/instances.test.ts). */
let database: TestDatabase;
const prisma = () => database.db.prisma;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const row = (username: string) => prisma().apiUser.findUniqueOrThrow({ where: { username } });

describe("rotation with a grace period", () => {
  it("when rotated with a grace period, then both keys authenticate until its expiry, and the cached old key stops at that moment", async () => {
    const cache = new KeyCache();
    const users = new ApiUsers(prisma(), cache);
    const old = (await users.create("graceful")).apiKey;
    const rotating = Date.now();
    const { apiKey: fresh, user } = await users.rotate("graceful", undefined, 2);
    const rotated = Date.now();
    expect(user.previousKeyHint).toBe(old.slice(0, 8));
    expect(user.keyHint).toBe(fresh.slice(0, 8));
    const expiresAt = user.previousKeyExpiresAt!.getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(rotating + 2_000 - 1);
    expect(expiresAt).toBeLessThanOrEqual(rotated + 2_000);
    // Still in the grace period when it answered (a loaded machine may answer after it: then nothing to check).
    const authenticated = (await users.authenticate(old))?.username;
    if (Date.now() < expiresAt) expect(authenticated).toBe("graceful");
    expect((await users.authenticate(fresh))?.username).toBe("graceful");
    // Cached, but only until the expiry: no notice arrives when a grace period ends.
    expect(cache.get(hashApiKey(old))).toBeDefined();
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 20));
    expect(cache.get(hashApiKey(old))).toBeUndefined();
    expect(await users.authenticate(old)).toBeUndefined();
    expect((await users.authenticate(fresh))?.username).toBe("graceful");
  });

  it("when rotated with a grace period, then its end is stored to the millisecond: the rotation's moment plus the grace, exactly", async () => {
    const users = new ApiUsers(prisma());
    await users.create("exact-grace");
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      const { user } = await users.rotate("exact-grace", undefined, 2);
      const after = Date.now();
      // Stored as computed, not rounded to a second (which made a 2 s grace last 1.5 to 2.5 s).
      const stored = (await row("exact-grace")).previousKeyExpiresAt!.getTime();
      expect(stored).toBe(user.previousKeyExpiresAt!.getTime());
      expect(stored).toBeGreaterThanOrEqual(before + 2_000);
      expect(stored).toBeLessThanOrEqual(after + 2_000);
    }
  });

  it("when rotated again during a grace period, then the key before stops at once: at most two keys work", async () => {
    const users = new ApiUsers(prisma(), new KeyCache());
    const first = (await users.create("twice-rotated")).apiKey;
    const second = (await users.rotate("twice-rotated", undefined, 3_600)).apiKey;
    const third = (await users.rotate("twice-rotated", undefined, 3_600)).apiKey;
    expect(await users.authenticate(first)).toBeUndefined();
    expect((await users.authenticate(second))?.username).toBe("twice-rotated");
    expect((await users.authenticate(third))?.username).toBe("twice-rotated");
  });

  it("when a user is revoked, then its previous key stops too; rotated after, it comes back with the new key alone", async () => {
    const users = new ApiUsers(prisma(), new KeyCache());
    const first = (await users.create("revoked-in-grace")).apiKey;
    const second = (await users.rotate("revoked-in-grace", undefined, 3_600)).apiKey;
    await users.revoke("revoked-in-grace");
    expect(await users.authenticate(first)).toBeUndefined();
    expect(await users.authenticate(second)).toBeUndefined();
    expect((await row("revoked-in-grace")).previousKeyHash).toBeNull();
    const { apiKey: third, user } = await users.rotate("revoked-in-grace", undefined, 3_600);
    expect(user.previousKeyHint).toBeNull();
    expect(await users.authenticate(second)).toBeUndefined();
    expect((await users.authenticate(third))?.username).toBe("revoked-in-grace");
  });

  it("when the grace period is 0, then the old key stops at once and no previous key is kept", async () => {
    const users = new ApiUsers(prisma(), new KeyCache());
    const old = (await users.create("no-grace")).apiKey;
    await users.authenticate(old);
    const { apiKey: fresh, user } = await users.rotate("no-grace", undefined, 0);
    expect(user.previousKeyExpiresAt).toBeNull();
    expect(await users.authenticate(old)).toBeUndefined();
    expect((await users.authenticate(fresh))?.username).toBe("no-grace");
  });
});

describe("last use of each key", () => {
  it("when keys are used, then each one's minute is written by flush, at most once per key per minute, the old key's apart from the new one's", async () => {
    let now = Date.UTC(2026, 10, 23, 10, 15, 42);
    const usage = new KeyUsage(prisma(), () => now);
    const users = new ApiUsers(prisma(), new KeyCache(), undefined, usage);
    const old = (await users.create("used-keys")).apiKey;
    const fresh = (await users.rotate("used-keys", undefined, 3_600)).apiKey;
    for (let i = 0; i < 10; i++) await users.authenticate(old);
    // Nothing is written on the request's path.
    expect((await row("used-keys")).previousKeyLastUsedAt).toBeNull();
    await usage.flush();
    expect((await row("used-keys")).previousKeyLastUsedAt).toEqual(new Date(Date.UTC(2026, 10, 23, 10, 15)));
    expect((await row("used-keys")).keyLastUsedAt).toBeNull();

    // The same minute again: nothing to write (the row's value is cleared to see whether a write comes).
    await prisma().apiUser.update({ where: { username: "used-keys" }, data: { previousKeyLastUsedAt: null } });
    await users.authenticate(old);
    await usage.flush();
    expect((await row("used-keys")).previousKeyLastUsedAt).toBeNull();

    now += 60_000;
    await users.authenticate(old);
    await users.authenticate(fresh);
    await usage.flush();
    const after = await row("used-keys");
    expect(after.previousKeyLastUsedAt).toEqual(new Date(Date.UTC(2026, 10, 23, 10, 16)));
    expect(after.keyLastUsedAt).toEqual(new Date(Date.UTC(2026, 10, 23, 10, 16)));
  });

  it("when another instance wrote a later minute, then an earlier one does not move it back", async () => {
    const early = new KeyUsage(prisma(), () => Date.UTC(2026, 10, 23, 9, 0));
    const users = new ApiUsers(prisma(), undefined, undefined, early);
    const key = (await users.create("late-writer")).apiKey;
    await prisma().apiUser.update({ where: { username: "late-writer" }, data: { keyLastUsedAt: new Date(Date.UTC(2026, 10, 23, 11, 0)) } });
    await users.authenticate(key);
    await early.flush();
    expect((await row("late-writer")).keyLastUsedAt).toEqual(new Date(Date.UTC(2026, 10, 23, 11, 0)));
  });
});

describe("last use in the admin listing", () => {
  it("when a key has called the API and the minutes are written, then GET /api/admin/users shows that minute for it, and none for a key never used", async () => {
    const keyUsage = new KeyUsage(prisma());
    const t = await startTestApp({ database, keyUsage, env: { CALLERS_USER_B: "lister", CALLERS_USER_C: "caller-c,idle-c" } });
    try {
      const admin = await t.key("lister");
      const used = await t.key("caller-c");
      await t.key("idle-c");
      const before = Math.floor(Date.now() / 60_000) * 60_000;
      expect((await request(t.url).get("/api/player/get-all-players").set("X-API-Key", used)).status).toBe(200);
      await keyUsage.flush();
      const res = await request(t.url).get("/api/admin/users").set("X-API-Key", admin);
      const byName = new Map((res.body.users as { username: string; keyLastUsedAt: string | null }[]).map((u) => [u.username, u.keyLastUsedAt]));
      expect(Date.parse(byName.get("caller-c")!)).toBeGreaterThanOrEqual(before);
      expect(byName.get("caller-c")).toMatch(/:00Z$/);
      expect(byName.get("idle-c")).toBeNull();
    } finally {
      await t.close();
    }
  });
});
