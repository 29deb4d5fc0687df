import { readFileSync } from "node:fs";
import internals from "@prisma/internals";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/core/logger.js";
import { migrate } from "../src/db/migrate.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/**
 * Migrations are SQL written by hand (Prisma's diff engine cannot run on our
 * machines), so this test is what keeps them and schema.prisma in step: it
 * migrates an empty database and compares its tables, columns, types,
 * nullability, defaults, indexes and foreign keys with Prisma's own reading
 * of the schema.
 */
type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: string;
  type: string;
  isRequired: boolean;
  hasDefaultValue: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
};
type DmmfModel = { name: string; dbName: string | null; fields: DmmfField[] };
type DmmfIndex = { model: string; type: string; dbName?: string | null; fields: { name: string }[] };

let t: TestDatabase;
let models: DmmfModel[];
let indexes: DmmfIndex[];

beforeAll(async () => {
  // Migrated here, not loaded from the tests' template: this test is about the migrations.
  t = await createTestDatabase({ migrated: false });
  await migrate(t.db, createLogger("silent"));
  const dmmf = await internals.getDMMF({ datamodel: readFileSync("prisma/schema.prisma", "utf8") });
  models = dmmf.datamodel.models as unknown as DmmfModel[];
  indexes = (dmmf.datamodel as unknown as { indexes: DmmfIndex[] }).indexes;
});
afterAll(() => t.drop());

const tableOf = (m: DmmfModel) => m.dbName ?? m.name;
const columnOf = (m: DmmfModel, field: string) => {
  const f = m.fields.find((x) => x.name === field)!;
  return f.dbName ?? f.name;
};

/** The PostgreSQL type Prisma would create for a field, as information_schema spells it. */
function expectedType(f: DmmfField): string {
  const [native, args = []] = f.nativeType ?? [];
  switch (f.type) {
    case "Int":
      return native === "SmallInt" ? "int2" : "int4";
    case "Bytes":
      return "bytea";
    case "BigInt":
      return "int8";
    case "Float":
      return "float8";
    case "Boolean":
      return "bool";
    case "Json":
      return native === "Json" ? "json" : "jsonb";
    case "DateTime":
      return native === "Timestamptz" ? `timestamptz(${args[0] ?? 6})` : native === "Date" ? "date" : `timestamp(${args[0] ?? 3})`;
    case "String":
      if (native === "Citext") return "citext";
      if (native === "VarChar") return `varchar(${args[0]})`;
      if (native === "Char") return `bpchar(${args[0]})`;
      return "text";
    default:
      throw new Error(`no mapping for Prisma type ${f.type}`);
  }
}

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const conn = await t.db.connect();
  try {
    return await conn.query<T>(sql, params);
  } finally {
    await conn.release();
  }
}

describe("the migrated database", () => {
  it("has exactly the tables of schema.prisma", async () => {
    const tables = await rows<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    expect(tables.map((r) => r.table_name).sort()).toEqual(models.map(tableOf).sort());
  });

  it("has, in every table, exactly the columns of its model with their types, nullability and defaults", async () => {
    for (const model of models) {
      const cols = await rows<{
        column_name: string;
        udt_name: string;
        is_nullable: string;
        character_maximum_length: number | null;
        datetime_precision: number | null;
        column_default: string | null;
      }>(
        `SELECT column_name, udt_name, is_nullable, character_maximum_length, datetime_precision, column_default
           FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`,
        [tableOf(model)],
      );
      const actual = Object.fromEntries(
        cols.map((c) => {
          const type = ["varchar", "bpchar"].includes(c.udt_name)
            ? `${c.udt_name}(${c.character_maximum_length})`
            : ["timestamptz", "timestamp"].includes(c.udt_name)
              ? `${c.udt_name}(${c.datetime_precision})`
              : c.udt_name;
          return [c.column_name, { type, nullable: c.is_nullable === "YES", hasDefault: c.column_default !== null }];
        }),
      );
      const expected = Object.fromEntries(
        model.fields
          .filter((f) => f.kind === "scalar")
          .map((f) => [f.dbName ?? f.name, { type: expectedType(f), nullable: !f.isRequired, hasDefault: f.hasDefaultValue }]),
      );
      expect(actual, tableOf(model)).toEqual(expected);
    }
  });

  it("has exactly the primary keys, unique indexes and indexes of schema.prisma, under their names", async () => {
    const actual = await rows<{ table: string; name: string; unique: boolean; primary: boolean; columns: string }>(
      `SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
              string_agg(a.attname, ',' ORDER BY k.n) AS columns
         FROM pg_index ix
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace ns ON ns.oid = t.relnamespace
         CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE ns.nspname = 'public' AND t.relname <> '_prisma_migrations'
        GROUP BY t.relname, i.relname, ix.indisunique, ix.indisprimary`,
    );
    const expected = indexes.map((ix) => {
      const model = models.find((m) => m.name === ix.model)!;
      const table = tableOf(model);
      const columns = ix.fields.map((f) => columnOf(model, f.name));
      const name = ix.dbName ?? (ix.type === "id" ? `${table}_pkey` : `${table}_${columns.join("_")}_${ix.type === "unique" ? "key" : "idx"}`);
      return { table, name, unique: ix.type !== "normal", primary: ix.type === "id", columns: columns.join(",") };
    });
    const sort = (xs: { name: string }[]) => [...xs].sort((a, b) => a.name.localeCompare(b.name));
    expect(sort(actual)).toEqual(sort(expected));
  });

  it("has exactly the foreign keys of schema.prisma's relations", async () => {
    const actual = await rows<{ from_table: string; from_columns: string; to_table: string; to_columns: string }>(
      `SELECT c.conrelid::regclass::text AS from_table, c.confrelid::regclass::text AS to_table,
              (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS from_columns,
              (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS to_columns
         FROM pg_constraint c WHERE c.contype = 'f'`,
    );
    const expected = models.flatMap((m) =>
      m.fields
        .filter((f) => f.kind === "object" && (f.relationFromFields?.length ?? 0) > 0)
        .map((f) => {
          const target = models.find((x) => x.name === f.type)!;
          return {
            from_table: tableOf(m),
            from_columns: f.relationFromFields!.map((c) => columnOf(m, c)).join(","),
            to_table: tableOf(target),
            to_columns: f.relationToFields!.map((c) => columnOf(target, c)).join(","),
          };
        }),
    );
    const key = (r: { from_table: string; from_columns: string }) => `${r.from_table}.${r.from_columns}`;
    expect([...actual].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([...expected].sort((a, b) => key(a).localeCompare(key(b))));
  });
});
