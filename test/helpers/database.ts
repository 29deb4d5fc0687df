import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { inject } from "vitest";
import { createLogger } from "../../src/core/logger.js";
import { type Database, openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrate.js";

/**
 * A migrated database of the test file's own: a fresh database on the
 * PostgreSQL server named by DATABASE_URL (CI runs the suite both ways), or
 * an in-memory PGlite when none is configured — loaded from the run's
 * migrated template (pglite-template.ts), which migrate.test.ts checks is
 * what migrating an empty database gives. `migrated: false` gives an empty one
 * (on PGlite, loaded from the run's empty template: a database as PGlite's
 * initdb makes it).
 */
export interface TestDatabase {
  db: Database;
  /** The URL of the fresh PostgreSQL database; undefined on PGlite. */
  url: string | undefined;
  drop(): Promise<void>;
}

export const serverUrl = process.env.DATABASE_URL?.trim() || undefined;
export const onPostgres = serverUrl !== undefined;

const quiet = createLogger("silent");

/**
 * Ends a pool a test made, once its connections are closed. pg-pool's `end()` resolves as soon as it has
 * asked them to close: a database dropped then (WITH FORCE) kills one still closing, and the pool, told of
 * an error on an idle connection with no "error" listener, throws it out of the test file (seen in CI).
 */
export async function endPool(pool: pg.Pool): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on("remove", () => {
      if (--open === 0) resolve();
    });
  });
  await pool.end();
  await closed;
}

/** Creates an empty database on the server (not migrated) and returns its URL and a dropper. */
export async function createServerDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!serverUrl) throw new Error("DATABASE_URL is not set");
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  if (serverUrl) {
    const server = await createServerDatabase();
    const db = openDatabase({ kind: "postgres", url: server.url, poolMax: 20 });
    if (migrated) await migrate(db, quiet);
    return {
      db,
      url: server.url,
      async drop() {
        await db.close();
        await server.drop();
      },
    };
  }
  const db = openDatabase({ kind: "memory", from: pgliteTemplate(migrated ? "migrated" : "empty") });
  if (migrated) await ownSyncSecret(db);
  return { db, url: undefined, drop: () => db.close() };
}

/**
 * On PGlite: fills the empty folder `dataDir` with the run's migrated database,
 * as a first start of the server leaves it (without its first user). Starting
 * a server or a command on it then skips PGlite's initdb and the migrations:
 * for the tests whose subject is not the first start (first-start.test.ts's).
 */
export async function migratedDataDir(dataDir: string): Promise<void> {
  const db = openDatabase({ kind: "embedded", dataDir, command: "test", from: pgliteTemplate("migrated") });
  try {
    await ownSyncSecret(db);
  } finally {
    await db.close();
  }
}

/**
 * A database of its own: its sync secret (migration 20261125100000_sync_identity) is its own too, and its
 * ETag versions counted under its key, as its migrations would leave them (20261129200000_version_identity).
 */
async function ownSyncSecret(db: Database): Promise<void> {
  await db.prisma.$executeRaw`UPDATE "sync_identity" SET "secret" = ${randomBytes(32)}`;
  await db.prisma.$executeRaw`UPDATE "version_identity" SET "key" = sync_key()`;
}

const templates = new Map<"empty" | "migrated", Blob>();
function pgliteTemplate(which: "empty" | "migrated"): Blob {
  const files = inject("pgliteTemplate");
  if (!files) throw new Error("no PGlite template: test/helpers/pglite-template.ts is vitest's globalSetup (vitest.config.ts)");
  let blob = templates.get(which);
  if (!blob) templates.set(which, (blob = new Blob([readFileSync(files[which])])));
  return blob;
}

/** Waits until a session of the database waits on a lock (a request under test, reaching a row another transaction holds). */
export async function lockWaited(db: Database): Promise<void> {
  for (let n = 0; ; n++) {
    const [row] = await db.prisma.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (row!.n > 0) return;
    if (n > 1_000) throw new Error("no session waits on the locked row");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
