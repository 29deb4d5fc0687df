import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKUP_TABLES } from "../src/backup/tables.js";
import { ENTITIES } from "../src/entities/all.js";
import { TRANSFER_RESOURCES } from "../src/transfer/resources.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/**
 * An entity's declaration (src/fields/entity.ts) is the one list of a resource: the import and export,
 * the backup, the versioned lists and the events are derived from ENTITIES. What is not derived is the
 * schema its migration makes: the triggers its declaration needs are checked here, on the migrated database.
 */
describe("what an entity's declaration gives it", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it("when the entities are listed, then each is imported and exported under its table's name, and backed up by its key", () => {
    expect(TRANSFER_RESOURCES.map((r) => [r.key, r.entity.kind])).toEqual(
      ENTITIES.map((e) => [e.table.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()), e.kind]),
    );
    const backedUp = BACKUP_TABLES.filter((t) => ENTITIES.some((e) => e.table === t.table));
    expect(backedUp.map((t) => [t.table, t.key, t.unserial === true])).toEqual(ENTITIES.map((e) => [e.table, [e.primaryKey], !e.generatedKey]));
    // Restored in the entities' order: a table after those its foreign keys name.
    for (const e of ENTITIES) {
      for (const target of Object.values(e.references)) expect(ENTITIES.findIndex((x) => x.table === target)).toBeLessThan(ENTITIES.indexOf(e));
    }
  });

  it("when the database is migrated, then each entity's table has the triggers its declaration needs, and only a versioned one counts its writes", async () => {
    const triggers = await database.db.prisma.$queryRawUnsafe<{ table: string; name: string }[]>(
      `SELECT c.relname::text AS table, t.tgname::text AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace ORDER BY 2`,
    );
    const counted = await database.db.prisma.$queryRawUnsafe<{ name: string }[]>("SELECT name::text AS name FROM data_versions ORDER BY 1");
    const needed = ["write_freeze", "data_version", "deleted_by", "written_by"];
    for (const e of ENTITIES) {
      const has = triggers.filter((t) => t.table === e.table && needed.some((n) => t.name === `${e.table}_${n}`)).map((t) => t.name);
      const expected = [`${e.table}_write_freeze`, ...(e.versioned ? [`${e.table}_data_version`, `${e.table}_deleted_by`, `${e.table}_written_by`] : [])];
      expect(has.sort(), e.table).toEqual(expected.sort());
      expect(
        counted.some((r) => r.name === e.table),
        `data_versions row of ${e.table}`,
      ).toBe(e.versioned);
    }
  });
});
