import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DbClient, ReadClient } from "../src/db/client.js";
import { readAll, readBatch } from "../src/db/list-query.js";
import { pgRawQueries } from "../src/db/pg-reader.js";
import { foreignKeyViolation, uniqueViolation } from "../src/db/prisma-errors.js";
import { tableVersion } from "../src/db/versions.js";
import { Prisma } from "../src/generated/prisma/client.js";
import { cosmeticById } from "../src/resources/cosmetic/queries.js";
import { allMaps } from "../src/resources/parkour/queries.js";
import { allPlayers, playerByNick } from "../src/resources/player/queries.js";
import { activeAt, activeItemsVersion, allItems } from "../src/resources/temporary-item/queries.js";
import { createTestDatabase, endPool, onPostgres, type TestDatabase } from "./helpers/database.js";
import { makeCosmetic, makePlayer } from "./helpers/fixtures.js";

/**
 * The read routes run their raw queries on node-postgres directly
 * (db/pg-reader.ts): every value must come back as Prisma's $queryRaw gives
 * it, or an answer would change (a bigint version as text, a timestamp
 * shifted by the server's time zone).
 */
describe.skipIf(!onPostgres)("read queries without Prisma (PostgreSQL)", () => {
  let t: TestDatabase;
  let prisma: ReadClient;
  let direct: ReadClient;

  beforeAll(async () => {
    t = await createTestDatabase();
    prisma = t.db.reader;
    direct = t.db.readQueries;
    expect(direct).not.toBe(prisma);
  });
  afterAll(() => t.drop());

  it("gives every column type back as Prisma does", async () => {
    const probe = Prisma.sql`SELECT 9007199254740993::int8 AS big, 12.50::numeric AS decimal, 2::int4 AS int, 1.5::float8 AS float,
      true AS bool, 'x'::text AS text, 'Ab'::citext AS ci, '2026-01-02 03:04:05.678'::timestamp AS ts,
      '2026-01-02 03:04:05+02'::timestamptz AS tstz, '2026-01-02'::date AS day, '{"a":[1,"b"]}'::jsonb AS doc,
      NULL::int8 AS nothing, ${"é 'quoted'"}::text AS param, ${42}::int4 AS number`;
    const [fromPrisma, fromPg] = await Promise.all([prisma.$queryRaw(probe), direct.$queryRaw(probe)]);
    expect(fromPg).toEqual(fromPrisma);
    const [row] = fromPg as Record<string, unknown>[];
    expect(row!.big).toBe(9007199254740993n);
    expect((row!.ts as Date).toISOString()).toBe("2026-01-02T03:04:05.678Z");
    expect((row!.day as Date).toISOString()).toBe("2026-01-02T00:00:00.000Z");
  });

  it("answers each read route's queries with the same rows", async () => {
    const player = await makePlayer(t.db.prisma, { nickname: "Readback" });
    const cosmetic = await makeCosmetic(t.db.prisma);
    const now = new Date();
    const queries: ((db: ReadClient) => Promise<unknown>)[] = [
      (db) => playerByNick(db, "readback"),
      (db) => playerByNick(db, player.pseudo.toUpperCase()),
      (db) => cosmeticById(db, cosmetic.id),
      (db) => cosmeticById(db, -1),
      (db) => tableVersion(db, { table: "players", versioned: true }),
      (db) => readAll(db, allPlayers),
      (db) => readAll(db, allMaps),
      // The first batch of a list, with the snapshot facts a Sync-Token is made of (read apart: they move).
      async (db) => {
        const { xmin, xmax, ...batch } = await readBatch(db, { source: allPlayers, where: Prisma.sql`TRUE`, after: null, rows: 1 }, true);
        return { ...batch, facts: [typeof xmin, typeof xmax] };
      },
      (db) => activeItemsVersion(db, now),
      (db) => readAll(db, allItems, activeAt(now)),
    ];
    for (const query of queries) {
      const [fromPrisma, fromPg] = await Promise.all([query(prisma), query(direct)]);
      expect(fromPg).toEqual(fromPrisma);
    }
  });

  it("names the constraint a one-statement write breaks as Prisma's failure does", async () => {
    const player = await makePlayer(t.db.prisma);
    const writes = [
      Prisma.sql`INSERT INTO players (pseudo, token, ip) VALUES (${player.pseudo.toUpperCase()}, 't', 'i') RETURNING *`,
      Prisma.sql`INSERT INTO reward_logs ("playerId", "rewardId") VALUES (${-5}, 1) RETURNING *`,
    ];
    for (const write of writes) {
      const failed = async (db: Pick<DbClient, "$queryRaw">) =>
        db.$queryRaw(write).then(
          () => undefined,
          (error: unknown) => error,
        );
      const [viaPrisma, viaPg] = [await failed(t.db.prisma), await failed(t.db.writeQueries)];
      expect(viaPg).toBeDefined();
      expect(uniqueViolation(viaPg)).toEqual(uniqueViolation(viaPrisma));
      expect(foreignKeyViolation(viaPg)).toEqual(foreignKeyViolation(viaPrisma));
      expect(uniqueViolation(viaPg) ?? foreignKeyViolation(viaPg)).toMatchObject({ constraint: expect.any(String) as string });
    }
  });

  describe("prepared statements", () => {
    /** One connection, so that what it holds can be asked of it. */
    let pool: pg.Pool;
    beforeAll(() => {
      pool = new pg.Pool({ connectionString: t.url, max: 1 });
    });
    afterAll(() => endPool(pool));
    const preparedCount = async (text: string) =>
      Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1", [text])).rows[0]!.n);

    it("when a statement runs a second time, then its connection prepares it once and keeps it; not with prepared statements off", async () => {
      const statement = Prisma.sql`SELECT id, name FROM parkour_maps WHERE id > ${0} ORDER BY id`;
      const db = pgRawQueries(pool);
      await db.$queryRaw(statement);
      expect(await preparedCount(statement.text)).toBe(0);
      await db.$queryRaw(statement);
      await db.$queryRaw(statement);
      expect(await preparedCount(statement.text)).toBe(1);

      const off = Prisma.sql`SELECT id, name FROM parkour_maps WHERE id >= ${0} ORDER BY id`;
      const unprepared = pgRawQueries(pool, false);
      for (let i = 0; i < 3; i++) await unprepared.$queryRaw(off);
      expect(await preparedCount(off.text)).toBe(0);
    });

    it("when a table's columns change under a prepared statement (a newer release's migration), then the statement still answers, with the new columns", async () => {
      await pool.query("CREATE TABLE prepared_probe (a int); INSERT INTO prepared_probe VALUES (1)");
      const db = pgRawQueries(pool);
      const everything = Prisma.sql`SELECT * FROM prepared_probe WHERE a = ${1}`;
      await db.$queryRaw(everything);
      expect(await db.$queryRaw(everything)).toEqual([{ a: 1 }]);
      expect(await preparedCount(everything.text)).toBe(1);
      await pool.query("ALTER TABLE prepared_probe ADD COLUMN b int NOT NULL DEFAULT 7");
      expect(await db.$queryRaw(everything)).toEqual([{ a: 1, b: 7 }]);
      expect(await db.$queryRaw(everything)).toEqual([{ a: 1, b: 7 }]);
    });
  });
});
