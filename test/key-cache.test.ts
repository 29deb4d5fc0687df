import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyCache, RefusedKeys } from "../src/auth/key-cache.js";
import { hashApiKey } from "../src/core/api-keys.js";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { keepKeyCacheInSync } from "../src/users/key-invalidation.js";
import { ApiUsers } from "../src/users/users.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { countingKeyLookups } from "./helpers/key-lookups.js";

const quiet = createLogger("silent");

describe("KeyCache", () => {
  const caller = (username: string) => ({ id: 1, username, role: "USER" });
  it("when a user is forgotten, then all its keys go, whatever the case of the name", () => {
    const cache = new KeyCache();
    cache.set("h1", caller("Website"), undefined, cache.version);
    cache.set("h2", caller("website"), undefined, cache.version);
    cache.set("h3", caller("other"), undefined, cache.version);
    cache.forgetUser("WEBSITE");
    expect([cache.get("h1"), cache.get("h2"), cache.get("h3")?.username]).toEqual([undefined, undefined, "other"]);
  });
  it("when an entry is older than its time to live, or the cache is off, then it is not used", async () => {
    const cache = new KeyCache(20);
    cache.set("h", caller("a"), undefined, cache.version);
    expect(cache.get("h")).toBeDefined();
    await new Promise((r) => setTimeout(r, 30));
    expect(cache.get("h")).toBeUndefined();
    cache.set("h", caller("a"), undefined, cache.version);
    cache.setEnabled(false);
    expect(cache.get("h")).toBeUndefined();
    cache.set("h", caller("a"), undefined, cache.version);
    expect(cache.get("h")).toBeUndefined();
  });
  it("when a user is forgotten while a lookup of its key runs, then the lookup's answer is not cached", () => {
    const cache = new KeyCache();
    // The lookup begins (it reads the key as valid), the revocation is announced, then the answer arrives.
    const version = cache.version;
    cache.forgetUser("website");
    cache.set("h", caller("website"), undefined, version);
    expect(cache.get("h")).toBeUndefined();
    cache.set("h", caller("website"), undefined, cache.version);
    expect(cache.get("h")?.username).toBe("website");
  });
});

/** Polls until the request answers `status`, for at most `ms`; returns how long it took. */
/**
 * Sends until the answer is `status`. A change of keys reaches the caches by a notification; their own
 * expiry, the last resort, is a minute: a bound between the two, however slow the machine, not a measure.
 */
async function notified(status: number, send: () => Promise<request.Response>): Promise<void> {
  const start = Date.now();
  for (;;) {
    if ((await send()).status === status) return;
    if (Date.now() - start > 20_000) throw new Error(`still not ${status} after 20 s: not notified, left to the cache's expiry`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("revocation with cached keys", () => {
  let database: TestDatabase;
  const apps: TestApp[] = [];
  const syncs: { stop(): Promise<void> }[] = [];
  const caches: KeyCache[] = [];
  const extraDbs: ReturnType<typeof openDatabase>[] = [];

  /** An instance of the service with its own key cache, kept in sync, on its own connection pool when on PostgreSQL. */
  async function instance(): Promise<TestApp> {
    const db = database.url ? openDatabase({ kind: "postgres", url: database.url, poolMax: 4 }) : database.db;
    if (database.url) extraDbs.push(db);
    const cache = new KeyCache();
    caches.push(cache);
    syncs.push(await keepKeyCacheInSync(db, cache, quiet));
    const app = await startTestApp({ database: { db, url: database.url, drop: () => Promise.resolve() }, keyCache: cache });
    apps.push(app);
    return app;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const s of syncs) await s.stop();
    for (const a of apps) await a.close();
    for (const db of extraDbs) await db.close();
    await database.drop();
  });

  it("when the operator revokes or rotates a key (another process), then every instance refuses the old key (notified, not at the cache's expiry)", async () => {
    const instances = onPostgres ? [await instance(), await instance()] : [await instance()];
    // The operator's CLI: its own connection, no cache.
    const cli = database.url ? openDatabase({ kind: "postgres", url: database.url, poolMax: 1 }) : database.db;
    if (database.url) extraDbs.push(cli);
    const operator = new ApiUsers(cli.prisma);

    const key = (await operator.create("user-C")).apiKey;
    const list = (app: TestApp, k: string) => request(app.url).get("/api/player/get-all-players").set("X-API-Key", k);
    for (const app of instances) expect((await list(app, key)).status).toBe(200);
    // Each instance now answers for this key from memory, not from the database.
    for (const cache of caches) expect(cache.get(hashApiKey(key))?.username).toBe("user-C");
    await operator.revoke("user-c");
    for (const app of instances) await notified(401, () => list(app, key));

    const rotatedFrom = (await operator.rotate("user-C")).apiKey;
    for (const app of instances) expect((await list(app, rotatedFrom)).status).toBe(200);
    await operator.rotate("user-C", undefined, 0);
    for (const app of instances) await notified(401, () => list(app, rotatedFrom));
  });

  it.runIf(onPostgres)("when the revocation channel is cut, then the cache is off and a revocation without notice still counts at once", async () => {
    const app = await instance();
    const key = await app.key("user-D");
    const list = () => request(app.url).get("/api/player/get-all-players").set("X-API-Key", key);
    expect((await list()).status).toBe(200);
    const conn = await database.db.connect();
    try {
      // Cut every LISTENing connection of this database, as a failover or a network blip would.
      await conn.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
      );
      await new Promise((r) => setTimeout(r, 200));
      // Revoke behind the service's back: no NOTIFY at all.
      await conn.query(`UPDATE api_users SET "revokedAt" = now() WHERE username = 'user-D'`);
    } finally {
      await conn.release();
    }
    expect((await list()).status).toBe(401);
  });
});

describe("keys known not to authenticate", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it("when an unknown or revoked key is presented again, then it is refused without another database lookup, and valid keys are still looked up", async () => {
    const counted = countingKeyLookups(database.db.prisma);
    const users = new ApiUsers(counted.prisma);
    const { apiKey: revoked } = await users.create("looping-plugin");
    await users.revoke("looping-plugin");
    const unknown = `gsk_${"Z".repeat(43)}`;

    counted.reset();
    for (let i = 0; i < 50; i++) {
      expect(await users.authenticate(revoked)).toBeUndefined();
      expect(await users.authenticate(unknown)).toBeUndefined();
    }
    expect(counted.lookups()).toBe(2);

    // A key created afterwards is new: nothing refused before stands in its way.
    const { apiKey: fresh } = await users.create("new-plugin");
    expect((await users.authenticate(fresh))?.username).toBe("new-plugin");
    const { apiKey: rotated } = await users.rotate("looping-plugin");
    expect((await users.authenticate(rotated))?.username).toBe("looping-plugin");
    expect(await users.authenticate(revoked)).toBeUndefined();
  });
});

describe("RefusedKeys", () => {
  it("when it is full, then the oldest entry goes first; when an entry is older than its time to live, then it is forgotten", async () => {
    const refused = new RefusedKeys(20, 2);
    refused.add("a");
    refused.add("b");
    refused.add("c");
    expect([refused.has("a"), refused.has("b"), refused.has("c")]).toEqual([false, true, true]);
    await new Promise((r) => setTimeout(r, 30));
    expect(refused.has("c")).toBe(false);
  });
});
