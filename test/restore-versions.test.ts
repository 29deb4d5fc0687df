import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { startService } from "../src/service/server.js";
import { loadSample } from "../src/transfer/sample.js";
import { LogCapture, startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";

/**
 * ETags after a restore. A restored database's counters start where the
 * backup (or dump) left them, while the database it came from went on
 * counting after it: a game server polling the old one holds an ETag that the
 * new one would reach after as many writes, for other data. Its versions move
 * past anything counted before, so that such an ETag never matches: no 304
 * for a list the client never saw, no If-Match applied over a change it never
 * read. Through `restore` (the move from the embedded database to PostgreSQL
 * too), and at the start of a database restored by pg_restore.
 */
const MAPS = "/api/parkour/get-all-maps";
const versionOf = (etag: string) => Number(/-v(\d+)/.exec(etag)![1]);
/** An operator's change of the first map, as an import or SQL makes it (no API route writes maps). */
const renameFirstMap = (db: TestDatabase, name: string) =>
  db.db.prisma.$executeRaw`UPDATE parkour_maps SET name = ${name} WHERE id = (SELECT min(id) FROM parkour_maps)`;

describe("ETags after `restore`", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "restore-versions-"));
  const file = path.join(dir, "community.backup");
  let source: TestApp;
  let key: string;
  /** What a game server cached from the old database after the backup was made. */
  let mapsTag: string;
  let cosmeticTag: string;
  const operator = (db: TestDatabase, argv: string[]) =>
    runCli(argv, { config: loadConfig({ NODE_ENV: "test" }), db: db.db, logger: createLogger("silent") }, { stdout: () => {}, stderr: () => {} });

  beforeAll(async () => {
    source = await startTestApp();
    key = await source.key("user-A");
    await loadSample(source.database.db.prisma, new Date());
    expect(await operator(source.database, ["backup", file])).toBe(0);
    // The old database goes on after the backup; a game server keeps what it answers.
    await renameFirstMap(source.database, "Lava run (after the backup)");
    mapsTag = (await request(source.url).get(MAPS).set("X-API-Key", key).expect(200)).headers.etag!;
    const patched = await request(source.url).patch("/api/cosmetic/update-cosmetic").set("X-API-Key", key).send({ id: 2, price: 1100 }).expect(200);
    cosmeticTag = patched.headers.etag!;
  }, 60_000);
  afterAll(async () => {
    await source?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("when the restored database's lists are written, then an ETag the old one gave never gets 304, however many writes", async () => {
    const target = await createTestDatabase();
    const app = await startTestApp({ database: target });
    try {
      expect(await operator(target, ["restore", file])).toBe(0);
      // The game server's key is restored with the rest: it polls the new database with what it holds.
      // Each write moves the list's version on by one: the old ETag's number is passed within these writes, unless the restore moved past it.
      for (let write = 0; write <= versionOf(mapsTag) + 1; write++) {
        const res = await request(app.url).get(MAPS).set("X-API-Key", key).set("If-None-Match", mapsTag);
        expect(res.status, `after ${write} write(s) on the restored database, ETag ${res.headers.etag}`).toBe(200);
        await renameFirstMap(target, `Lava run (restored, write ${write + 1})`);
      }
    } finally {
      await app.close();
      await target.drop();
    }
  });

  it("when a restored cosmetic is edited, then the old database's ETag is neither a 304 nor a match for If-Match", async () => {
    const target = await createTestDatabase();
    const app = await startTestApp({ database: target });
    try {
      expect(await operator(target, ["restore", file])).toBe(0);
      const edited = await request(app.url).patch("/api/cosmetic/update-cosmetic").set("X-API-Key", key).send({ id: 2, price: 900 }).expect(200);
      expect(edited.headers.etag).not.toBe(cosmeticTag);
      const read = await request(app.url).get("/api/cosmetic/get-cosmetic?id=2").set("X-API-Key", key).set("If-None-Match", cosmeticTag);
      expect(read.status).toBe(200);
      expect((read.body as { price: number }).price).toBe(900);
      const stale = await request(app.url)
        .patch("/api/cosmetic/update-cosmetic")
        .set("X-API-Key", key)
        .set("If-Match", cosmeticTag)
        .send({ id: 2, price: 1200 });
      expect(stale.status).toBe(412);
      // The versions still work as versions: the restored database's own ETag applies once.
      await request(app.url)
        .patch("/api/cosmetic/update-cosmetic")
        .set("X-API-Key", key)
        .set("If-Match", edited.headers.etag!)
        .send({ id: 2, price: 950 })
        .expect(200);
    } finally {
      await app.close();
      await target.drop();
    }
  });
});

/**
 * pg_restore brings the counters back as the dump held them, and makes the
 * sync identity table anew (another key): what events-restore.test.ts does to
 * the database, with the service started on it as `npm start` does.
 */
describe.skipIf(!onPostgres)("ETags after pg_restore (PostgreSQL)", () => {
  it("when the service starts on a restored database, then its versions move once, and an ETag from after the dump never gets 304", async () => {
    const database = await createTestDatabase();
    const logs = new LogCapture();
    const config = loadConfig({ NODE_ENV: "test", DATABASE_URL: database.url!, HOST: "127.0.0.1", PORT: "0", METRICS_PORT: "off" });
    try {
      await loadSample(database.db.prisma, new Date());
      const before = await startTestApp({ database: { ...database, drop: () => Promise.resolve() } });
      const key = await before.key("user-A");
      const [dumped] = await database.db.prisma.$queryRaw<[{ version: bigint }]>`SELECT version FROM data_versions WHERE name = 'parkour_maps'`;
      await renameFirstMap(database, "Lava run (after the dump)");
      const mapsTag = (await request(before.url).get(MAPS).set("X-API-Key", key).expect(200)).headers.etag!;
      await before.close();
      await database.db.prisma.$transaction([
        database.db.prisma.$executeRaw`UPDATE data_versions SET version = ${dumped.version} WHERE name = 'parkour_maps'`,
        database.db.prisma.$executeRaw`CREATE TABLE sync_identity_restored (LIKE sync_identity INCLUDING ALL)`,
        database.db.prisma.$executeRaw`INSERT INTO sync_identity_restored SELECT * FROM sync_identity`,
        database.db.prisma.$executeRaw`DROP TABLE sync_identity`,
        database.db.prisma.$executeRaw`ALTER TABLE sync_identity_restored RENAME TO sync_identity`,
      ]);

      const service = await startService(config, createLogger("info", logs));
      let restartedTag: string;
      try {
        const url = `http://127.0.0.1:${service.port}`;
        await renameFirstMap(database, "Lava run (restored, then edited)");
        const res = await request(url).get(MAPS).set("X-API-Key", key).set("If-None-Match", mapsTag);
        expect(res.status).toBe(200);
        restartedTag = res.headers.etag!;
      } finally {
        await service.stop();
      }
      expect(logs.lines.filter((l) => /this database was restored or copied/.test(String(l.msg)))).toHaveLength(1);

      // Once: the next start finds the key its versions were counted under, and moves nothing.
      const again = await startService(config, createLogger("info", logs));
      try {
        await request(`http://127.0.0.1:${again.port}`).get(MAPS).set("X-API-Key", key).set("If-None-Match", restartedTag).expect(304);
      } finally {
        await again.stop();
      }
      expect(logs.lines.filter((l) => /this database was restored or copied/.test(String(l.msg)))).toHaveLength(1);
    } finally {
      await database.drop();
    }
  }, 60_000);
});
