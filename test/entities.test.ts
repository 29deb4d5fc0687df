import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { listOf, readAll, WRITTEN_BY } from "../src/db/list-query.js";
import { cosmetic } from "../src/entities/cosmetic.js";
import { formAnswer } from "../src/entities/form.js";
import { infectedStats } from "../src/entities/infected.js";
import { parkourMap } from "../src/entities/parkour.js";
import { player } from "../src/entities/player.js";
import { rewardLog } from "../src/entities/reward-log.js";
import { temporaryItem } from "../src/entities/temporary-item.js";
import { world } from "../src/entities/world.js";
import type { Entity, Projection } from "../src/fields/entity.js";
import type { PrismaClient } from "../src/generated/prisma/client.js";
import { SAMPLE_FILE } from "../src/transfer/sample.js";
import { importData } from "../src/transfer/transfer.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/** Each entity with its rows as Prisma's client reads them (Dates, numbers), ordered by primary key. */
const ENTITIES: [Entity, (prisma: PrismaClient) => Promise<object[]>][] = [
  [player, (p) => p.player.findMany({ orderBy: { id: "asc" } })],
  [cosmetic, (p) => p.cosmetic.findMany({ orderBy: { id: "asc" } })],
  [formAnswer, (p) => p.formAnswer.findMany({ orderBy: { id: "asc" } })],
  [infectedStats, (p) => p.infectedStats.findMany({ orderBy: { playerId: "asc" } })],
  [temporaryItem, (p) => p.temporaryItem.findMany({ orderBy: { id: "asc" } })],
  [rewardLog, (p) => p.rewardLog.findMany({ orderBy: { id: "asc" } })],
  [world, (p) => p.world.findMany({ orderBy: { id: "asc" } })],
  [parkourMap, (p) => p.parkourMap.findMany({ orderBy: { id: "asc" } })],
];

const projections = (e: Entity) => [e.full, ...(e.summary ? [e.summary] : [])] as Projection<Entity["fields"], object>[];
const keysOf = (p: Projection<Entity["fields"], object>) => Object.keys((p.response as unknown as z.ZodObject).shape);

describe("entities derived from one table of fields", () => {
  it("when the player summary is made, then it is the full record without its sensitive fields, in the same order", () => {
    const full = keysOf(player.full);
    expect(keysOf(player.summary!)).toEqual(full.filter((k) => !["token", "firstConnection", "totalTimeConnection", "ip"].includes(k)));
    const fullShape = (player.full.response as unknown as z.ZodObject).shape;
    for (const [key, schema] of Object.entries((player.summary!.response as unknown as z.ZodObject).shape)) {
      expect(schema).toBe(fullShape[key]);
    }
  });
});

describe("entities: SQL and TypeScript write the same answer", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await importData(t.db.prisma, JSON.parse(await readFile(SAMPLE_FILE, "utf8")));
  });
  afterAll(() => t.drop());

  it.each(ENTITIES.map(([e, rows]) => [e.table, e, rows] as const))(
    "when the sample's %s are read, then the JSON PostgreSQL builds equals JSON.stringify of the mapped rows",
    async (_table, entity, rowsOf) => {
      const rows = await rowsOf(t.db.prisma);
      expect(rows.length).toBeGreaterThan(0);
      for (const projection of projections(entity)) {
        // Batches of 2 rows: the JSON of a list read in several batches is the JSON of the whole.
        const built = await readAll(t.db.prisma, listOf(entity, projection), undefined, 2);
        expect(built).toBe(JSON.stringify(rows.map((row) => projection.toJson(row as never))));
        expect(JSON.parse(built)).toEqual(rows.map((row) => projection.response.parse(projection.toJson(row as never))));
      }
    },
  );

  it.each(ENTITIES.map(([e]) => [e.table, e] as const))(
    "when %s is migrated, then its table has exactly the entity's columns, and the entity's unique constraints are its unique indexes",
    async (table, entity) => {
      const conn = await t.db.connect();
      try {
        const columns = await conn.query<{ name: string }>(
          // Besides the fields: the cosmetic's row version (If-Match) and the sync's stamp.
          `SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1 AND column_name NOT IN ('version', $2)`,
          [table, WRITTEN_BY],
        );
        // And the column of a partial unique index the entity declares (a reward's sent moment).
        const partial = entity.unique.flatMap((u) => (u.where ? [u.where] : []));
        // And the columns the database keeps for itself (the player's ipSetAt, for retention).
        expect(columns.map((c) => c.name).sort()).toEqual([...Object.keys(entity.fields), ...partial, ...entity.bookkeeping].sort());
        const indexes = await conn.query<{ name: string; columns: string; where: string | null }>(
          `SELECT i.relname AS name, string_agg(a.attname, ',' ORDER BY k.ord) AS columns, pg_get_expr(ix.indpred, ix.indrelid) AS where
             FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class c ON c.oid = ix.indrelid
             CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
            WHERE c.relname = $1 AND ix.indisunique AND NOT ix.indisprimary
            GROUP BY i.relname, ix.indpred, ix.indrelid ORDER BY i.relname`,
          [table],
        );
        const declared = entity.unique.map((u) => ({ name: u.constraint, columns: u.columns.join(","), where: u.where === undefined ? null : `"${u.where}"` }));
        expect(indexes).toEqual(declared.sort((a, b) => a.name.localeCompare(b.name)));
      } finally {
        await conn.release();
      }
    },
  );
});
