import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { jsonList } from "../src/db/json-list.js";
import type { Entity, Projection } from "../src/fields/entity.js";
import { Prisma, type PrismaClient } from "../src/generated/prisma/client.js";
import { cosmetic } from "../src/resources/cosmetic/entity.js";
import { formAnswer } from "../src/resources/form/entity.js";
import { infectedStats } from "../src/resources/infected/entity.js";
import { parkourMap } from "../src/resources/parkour/entity.js";
import { player } from "../src/resources/player/entity.js";
import { rewardLog } from "../src/resources/reward-log/entity.js";
import { temporaryItem } from "../src/resources/temporary-item/entity.js";
import { world } from "../src/resources/world/entity.js";
import { SAMPLE_FILE } from "../src/transfer/sample.js";
import { importData } from "../src/transfer/transfer.js";
import { readFile } from "node:fs/promises";
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
/** The names a SELECT list answers, in order: `"a", to_char(…) AS "b"` → a, b. */
const selected = (p: Projection<Entity["fields"], object>) =>
  p.columns.sql.split(/,\s*(?=(?:[^()]*\([^()]*\))*[^()]*$)/).map((c) => /"([^"]+)"$/.exec(c.trim())![1]);

describe("entities derived from one table of fields", () => {
  it.each(ENTITIES.map(([e]) => [e.table, e] as const))(
    "when %s is selected, then its SELECT list answers the response schema's fields in the schema's order",
    (_table, entity) => {
      for (const projection of projections(entity)) expect(selected(projection)).toEqual(keysOf(projection));
    },
  );

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
        const sql = Prisma.sql`SELECT ${projection.columns} FROM ${Prisma.raw(`"${entity.table}"`)}`;
        const built = await jsonList(t.db.prisma, sql, `r."${entity.primaryKey}"`);
        expect(built).toBe(JSON.stringify(rows.map((row) => projection.toJson(row as never))));
        expect(JSON.parse(built)).toEqual(rows.map((row) => projection.response.parse(projection.toJson(row as never))));
      }
    },
  );
});
