import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/core/logger.js";
import { type Database, openDatabase } from "../src/db/database.js";
import { migrate } from "../src/db/migrate.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer, makeWorld } from "./helpers/fixtures.js";

/**
 * DATABASE_READ_URL, with a second database standing in for the replica: it
 * holds other data than the primary, so every answer shows where it was read.
 */
describe.skipIf(!onPostgres)("DATABASE_READ_URL (PostgreSQL)", () => {
  const quiet = createLogger("silent");
  let primary: { url: string; drop(): Promise<void> };
  let replica: { url: string; drop(): Promise<void> };
  let db: Database;
  let primaryOnly: Database;
  let replicaOnly: Database;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    [primary, replica] = await Promise.all([createServerDatabase(), createServerDatabase()]);
    primaryOnly = openDatabase({ kind: "postgres", url: primary.url, poolMax: 2 });
    replicaOnly = openDatabase({ kind: "postgres", url: replica.url, poolMax: 2 });
    await migrate(primaryOnly, quiet);
    await migrate(replicaOnly, quiet);
    db = openDatabase({ kind: "postgres", url: primary.url, readUrl: replica.url, poolMax: 4 });
    t = await startTestApp({ database: { db, url: primary.url, drop: () => db.close() } });
    // The key exists on the primary only: if keys were read from the replica, every request would be 401.
    key = await t.key("user-A");
  });
  afterAll(async () => {
    await t.close();
    await db.close();
    await primaryOnly.close();
    await replicaOnly.close();
    await primary.drop();
    await replica.drop();
  });

  it("when a GET route is called, then it reads the replica, while the key is checked on the primary", async () => {
    await makePlayer(primaryOnly.prisma, { pseudo: "OnPrimary" });
    await makePlayer(replicaOnly.prisma, { pseudo: "OnReplica" });
    const onReplica = await request(t.url).get("/api/player/get-player-by-nick").query({ nick: "OnReplica" }).set("X-API-Key", key);
    expect(onReplica.status).toBe(200);
    expect(onReplica.body.pseudo).toBe("OnReplica");
    const onPrimary = await request(t.url).get("/api/player/get-player-by-nick").query({ nick: "OnPrimary" }).set("X-API-Key", key);
    expect(onPrimary.status).toBe(404);
    const all = await request(t.url).get("/api/player/get-all-players").set("X-API-Key", key);
    expect(all.body.map((p: { pseudo: string }) => p.pseudo)).toEqual(["OnReplica"]);
    // A list longer than its first batch: the rest read through a cursor, on the replica too.
    await replicaOnly.prisma.$executeRawUnsafe(
      `INSERT INTO players (pseudo, token, ip) SELECT 'replica' || g, 't', '198.51.100.2' FROM generate_series(1, 1500) AS g`,
    );
    const long = await request(t.url).get("/api/player/get-all-players").set("X-API-Key", key);
    expect(long.body).toHaveLength(1501);
    expect(long.body.at(-1).pseudo).toBe("replica1500");
  });

  it("when a write is sent, then it goes to the primary only, with its audit entry", async () => {
    const world = await makeWorld(primaryOnly.prisma);
    const res = await request(t.url).patch("/api/freebuild/update-world").set("X-API-Key", key).send({ id: world.id, tag: "moved" });
    expect(res.status).toBe(200);
    expect((await primaryOnly.prisma.world.findUniqueOrThrow({ where: { id: world.id } })).tag).toBe("moved");
    expect(await replicaOnly.prisma.world.count()).toBe(0);
    expect(await replicaOnly.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM audit_log`).toEqual([{ n: 0n }]);
  });

  it("when the replica's URL names a database that does not exist, then 503s, not 500s", async () => {
    const missing = new URL(replica.url);
    missing.pathname = `${missing.pathname}_missing`;
    const wrong = openDatabase({ kind: "postgres", url: primary.url, readUrl: missing.toString(), poolMax: 2 });
    const broken = await startTestApp({ database: { db: wrong, url: primary.url, drop: () => wrong.close() } });
    try {
      expect((await request(broken.url).get("/readyz")).status).toBe(503);
      const read = await request(broken.url).get("/api/player/get-all-players").set("X-API-Key", key);
      expect(read.status).toBe(503);
    } finally {
      await broken.close();
      await wrong.close();
    }
  });

  it("when the replica cannot be reached, then /readyz and the GETs answer 503, and writes still work", async () => {
    const dead = openDatabase({ kind: "postgres", url: primary.url, readUrl: "postgresql://postgres@127.0.0.1:1/none", poolMax: 2, connectTimeoutMs: 500 });
    const broken = await startTestApp({ database: { db: dead, url: primary.url, drop: () => dead.close() } });
    try {
      expect((await request(broken.url).get("/readyz")).status).toBe(503);
      const read = await request(broken.url).get("/api/parkour/get-all-maps").set("X-API-Key", key);
      expect(read.status).toBe(503);
      expect(read.body).toEqual({ code: 503, message: "Database unavailable, retry later" });
      const world = await makeWorld(primaryOnly.prisma);
      expect((await request(broken.url).patch("/api/freebuild/update-world").set("X-API-Key", key).send({ id: world.id, tag: "x" })).status).toBe(200);
    } finally {
      await broken.close();
      await dead.close();
    }
  });
});
