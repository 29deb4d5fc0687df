import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { dumpMemoryDatabase, openDatabase } from "../../src/db/database.js";
import { migrate, readMigrations } from "../../src/db/migrate.js";
import { createLogger } from "../../src/logger.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The file of the migrated PGlite template (a dumpDataDir() tarball); undefined on PostgreSQL. */
    pgliteTemplate: string | undefined;
  }
}

/**
 * vitest globalSetup: on PGlite (no DATABASE_URL), creates and migrates one
 * in-memory database per run and writes its data folder to a temporary file,
 * which createTestDatabase loads for each migrated database it makes: creating
 * a PGlite database and migrating it costs several times more than loading one.
 * In watch mode, it is made again before a rerun when the migrations changed.
 */
export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (process.env.DATABASE_URL?.trim()) {
    project.provide("pgliteTemplate", undefined);
    return undefined;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "pglite-template-"));
  const file = path.join(dir, "migrated.tar.gz");
  let madeFrom = "";
  const make = async () => {
    const migrations = JSON.stringify(await readMigrations());
    if (migrations === madeFrom) return;
    const db = openDatabase({ kind: "memory" });
    try {
      await migrate(db, createLogger("silent"));
      writeFileSync(file, Buffer.from(await (await dumpMemoryDatabase(db)).arrayBuffer()));
    } finally {
      await db.close();
    }
    madeFrom = migrations;
  };
  await make();
  project.onTestsRerun(make);
  project.provide("pgliteTemplate", file);
  return () => rmSync(dir, { recursive: true, force: true });
}
