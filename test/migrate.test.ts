import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { MIGRATIONS_DIR, migrate, prepareSchema, readMigrations } from "../src/db/migrate.js";
import { createServerDatabase, createTestDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";

const quiet = createLogger("silent");
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function fresh(options: { migrated?: boolean } = { migrated: false }): Promise<TestDatabase> {
  const t = await createTestDatabase(options);
  cleanups.push(() => t.drop());
  return t;
}

async function bookkeeping(t: TestDatabase) {
  const conn = await t.db.connect();
  try {
    return await conn.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
    );
  } finally {
    await conn.release();
  }
}

async function tableExists(t: TestDatabase, table: string): Promise<boolean> {
  const conn = await t.db.connect();
  try {
    const [row] = await conn.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [table]);
    return row!.exists;
  } finally {
    await conn.release();
  }
}

/** A copy of the real migrations plus extra ones, in a temporary folder. */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "migrations-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

describe("migrate", () => {
  it("when run on an empty database, then it applies every migration once and records them as Prisma does", async () => {
    const t = await fresh();
    const local = await readMigrations();
    expect((await migrate(t.db, quiet)).applied).toEqual(local.map((m) => m.name));
    expect((await migrate(t.db, quiet)).applied).toEqual([]);

    const rows = await bookkeeping(t);
    expect(rows.map((r) => r.migration_name)).toEqual(local.map((m) => m.name));
    for (const row of rows) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("when MIGRATE_ON_START=false and a migration is pending, then start-up refuses naming it; once applied by the release step, it starts", async () => {
    const t = await fresh();
    const local = await readMigrations();
    await expect(prepareSchema(t.db, quiet, false)).rejects.toThrow(
      `${local.length} migration(s) not applied (${local.map((m) => m.name).join(", ")}) and MIGRATE_ON_START=false`,
    );
    await migrate(t.db, quiet);
    await expect(prepareSchema(t.db, quiet, false)).resolves.toBeUndefined();
    const dir = migrationsWith({ "29990101000000_later": "CREATE TABLE later_one (id int);" });
    await expect(prepareSchema(t.db, quiet, false)).resolves.toBeUndefined();
    const { pendingMigrations } = await import("../src/db/migrate.js");
    expect(await pendingMigrations(t.db, dir)).toEqual(["29990101000000_later"]);
  });

  it("when a migration fails, then none of it stays, it is not recorded, and the error names it", async () => {
    const t = await fresh();
    const dir = migrationsWith({
      "29990101000000_broken": `CREATE TABLE "half_done" ("id" INTEGER);\nSELECT no_such_function();`,
    });
    await expect(migrate(t.db, quiet, dir)).rejects.toThrow(/Migration 29990101000000_broken failed/);
    expect(await tableExists(t, "half_done")).toBe(false);
    expect((await bookkeeping(t)).map((r) => r.migration_name)).not.toContain("29990101000000_broken");
    // the migrations before it were applied and stay applied
    expect(await tableExists(t, "players")).toBe(true);
  });

  it("when a migration is left marked as failed (by prisma migrate), then start-up refuses with a clear message", async () => {
    const t = await fresh({ migrated: true });
    const conn = await t.db.connect();
    await conn.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ('x', 'y', '29990101000000_stuck', now())`);
    await conn.release();
    await expect(migrate(t.db, quiet)).rejects.toThrow(/29990101000000_stuck failed earlier/);
  });

  it.runIf(onPostgres)("when several instances start at once, then the migrations are applied exactly once", async () => {
    const server = await createServerDatabase();
    cleanups.push(() => server.drop());
    const instances = Array.from({ length: 4 }, () => openDatabase({ kind: "postgres", url: server.url, poolMax: 2 }));
    cleanups.push(async () => {
      for (const db of instances) await db.close();
    });
    const results = await Promise.all(instances.map((db) => migrate(db, quiet)));
    const applied = results.flatMap((r) => r.applied);
    // Each by whichever instance took the lock first for it.
    expect([...applied].sort()).toEqual((await readMigrations()).map((m) => m.name));
    const conn = await instances[0]!.connect();
    const [row] = await conn.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations"`);
    await conn.release();
    expect(row!.n).toBe(applied.length);
  });
});

/** Everything a migration can make, as text: objects and their definitions, and every table's rows. */
async function contents(t: TestDatabase): Promise<Record<string, unknown>> {
  const conn = await t.db.connect();
  try {
    const catalog = await conn.query<{ kind: string; def: string }>(`
      SELECT 'relation' AS kind, relname || ' ' || relkind::text AS def FROM pg_class WHERE relnamespace = 'public'::regnamespace
      UNION ALL SELECT 'column', table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
        FROM information_schema.columns WHERE table_schema = 'public'
      UNION ALL SELECT 'constraint', conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'public'::regnamespace
      UNION ALL SELECT 'index', indexdef FROM pg_indexes WHERE schemaname = 'public'
      UNION ALL SELECT 'trigger', pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL SELECT 'function', pg_get_functiondef(oid) FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND prokind IN ('f', 'p')
      UNION ALL SELECT 'view', viewname || ' ' || pg_get_viewdef(viewname::regclass) FROM pg_views WHERE schemaname = 'public'
      UNION ALL SELECT 'sequence', sequencename || ' ' || coalesce(last_value::text, '') FROM pg_sequences WHERE schemaname = 'public'
      UNION ALL SELECT 'extension', extname || ' ' || extversion FROM pg_extension
      ORDER BY 1, 2`);
    const tables = catalog.filter((r) => r.kind === "relation" && r.def.endsWith(" r")).map((r) => r.def.slice(0, -2));
    const rows: Record<string, unknown> = {};
    for (const table of tables) {
      // The bookkeeping's ids and times, the sync secret and the key derived from it differ by nature; what they are is compared instead.
      const select =
        table === "_prisma_migrations"
          ? `SELECT migration_name, checksum, applied_steps_count, finished_at IS NOT NULL AS finished, rolled_back_at FROM "_prisma_migrations"`
          : table === "sync_identity"
            ? `SELECT id, length(secret) AS secret_bytes FROM "sync_identity"`
            : table === "version_identity"
              ? `SELECT id, key = sync_key() AS counted_under_its_own_key FROM "version_identity"`
              : `SELECT * FROM "${table}"`;
      rows[table] = (await conn.query<{ row: string }>(`SELECT to_jsonb(x)::text AS row FROM (${select}) x ORDER BY 1`)).map((r) => r.row);
    }
    return { catalog: catalog.map((r) => `${r.kind}: ${r.def}`), rows };
  } finally {
    await conn.release();
  }
}

describe("the migrated template the tests start from (PGlite)", () => {
  it.skipIf(onPostgres)(
    "when a test database is made from it, then it holds exactly what migrating an empty database does, and a sync secret of its own",
    async () => {
      const migrated = await fresh();
      await migrate(migrated.db, quiet);
      const fromTemplate = await createTestDatabase();
      cleanups.push(() => fromTemplate.drop());
      const expected = await contents(migrated);
      expect((expected.catalog as string[]).length).toBeGreaterThan(100);
      expect(Object.keys(expected.rows as object)).toContain("players");
      expect(await contents(fromTemplate)).toEqual(expected);
      const other = await createTestDatabase();
      cleanups.push(() => other.drop());
      const key = async (t: TestDatabase) => (await t.db.prisma.$queryRaw<{ k: string }[]>`SELECT sync_key() AS k`)[0]!.k;
      expect(await key(other)).not.toBe(await key(fromTemplate));
      // Three PGlite databases, one of them created and migrated: a minute on a busy machine.
    },
    120_000,
  );
});
