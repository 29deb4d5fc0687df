import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import type { Database, SqlConnection } from "./database.js";
import { renewVersions } from "./versions.js";

/**
 * Applies the SQL migrations of prisma/migrations as `prisma migrate deploy` would (same layout, the same
 * `_prisma_migrations` bookkeeping and advisory lock: either tool can take over), since Prisma's migrate
 * engine is a native download not every machine can fetch. Unlike Prisma, each migration is one
 * transaction: a failing one leaves neither half a schema nor a "failed" row.
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));

/** The advisory lock key `prisma migrate` takes: instances starting together apply migrations once. */
export const PRISMA_MIGRATE_LOCK = 72707369;

const CREATE_BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface AppliedMigration {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<LocalMigration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

export interface MigrationResult {
  applied: string[];
}

export async function migrate(db: Database, logger: Logger, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const conn = await db.connect();
  const applied: string[] = [];
  let looked = false;
  try {
    // One transaction per migration, each under the lock taken for that transaction alone: through a
    // transaction-mode pooler a session's lock would stay with whichever server connection took it, held
    // for good, and the next start would wait on it forever.
    for (;;) {
      await conn.exec("BEGIN");
      try {
        await conn.query(`SELECT pg_advisory_xact_lock(${PRISMA_MIGRATE_LOCK})`);
        const done = await appliedMigrations(conn);
        if (!looked) {
          looked = true;
          warnAboutDrift(logger, migrations, done);
        }
        const next = migrations.find((m) => !done.has(m.name));
        if (!next) {
          await conn.exec("COMMIT");
          return { applied };
        }
        await applyOne(conn, next);
        await conn.exec("COMMIT");
        applied.push(next.name);
        logger.info({ migration: next.name }, "migration applied");
      } catch (error) {
        await conn.exec("ROLLBACK").catch(() => undefined);
        throw error;
      }
    }
  } finally {
    await conn.release();
  }
}

/** The migrations the database has finished, by name; refuses one that failed earlier and was never resolved. */
async function appliedMigrations(conn: SqlConnection): Promise<Map<string, AppliedMigration>> {
  await conn.exec(CREATE_BOOKKEEPING);
  const rows = await conn.query<AppliedMigration>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`);
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new Error(
      `Migration ${failed.migration_name} failed earlier and was never resolved. Fix the database by hand, then ` +
        `mark it with \`prisma migrate resolve\` or delete its row from _prisma_migrations.`,
    );
  }
  return new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r]));
}

function warnAboutDrift(logger: Logger, migrations: LocalMigration[], done: Map<string, AppliedMigration>): void {
  for (const name of done.keys()) {
    if (!migrations.some((m) => m.name === name)) {
      logger.warn({ migration: name }, "the database has a migration this version does not know (newer version?)");
    }
  }
  for (const migration of migrations) {
    const previous = done.get(migration.name);
    if (previous && previous.checksum !== migration.checksum) {
      logger.warn({ migration: migration.name }, "migration.sql changed after it was applied");
    }
  }
}

/** Migrations of this version not yet applied to the database (all of them on an empty one). */
export async function pendingMigrations(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const conn = await db.connect();
  try {
    const [table] = await conn.query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
    if (!table?.present) return migrations.map((m) => m.name);
    const rows = await conn.query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const done = new Set(rows.map((r) => r.migration_name));
    return migrations.filter((m) => !done.has(m.name)).map((m) => m.name);
  } finally {
    await conn.release();
  }
}

/**
 * Migrations at start-up (the default; safe from many instances at once, under
 * an advisory lock), or — MIGRATE_ON_START=false, when a release step applies
 * them — a refusal to serve a schema older than this version expects.
 */
export async function prepareSchema(db: Database, logger: Logger, migrateOnStart: boolean): Promise<void> {
  if (migrateOnStart) {
    await migrate(db, logger);
  } else {
    const pending = await pendingMigrations(db);
    if (pending.length > 0) {
      throw new Error(
        `${pending.length} migration(s) not applied (${pending.join(", ")}) and MIGRATE_ON_START=false: ` +
          "run `node dist/cli/main.js migrate` (npm run db:migrate) first",
      );
    }
  }
  if (await db.prisma.$transaction((tx) => renewVersions(tx, false))) {
    logger.warn(
      "this database was restored or copied (its sync key is not the one its ETag versions were counted under): " +
        "the versions moved past anything counted before, so no ETag given earlier names its data",
    );
  }
}

/** Within the caller's transaction: a failing migration leaves neither half a schema nor a "failed" row behind. */
async function applyOne(conn: SqlConnection, migration: LocalMigration): Promise<void> {
  const id = randomUUID();
  try {
    await conn.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 0)`,
      [id, migration.checksum, migration.name],
    );
    await conn.exec(migration.sql);
    await conn.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
  } catch (error) {
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
  }
}
