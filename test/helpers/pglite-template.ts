import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { createLogger } from "../../src/core/logger.js";
import { type Database, dumpMemoryDatabase, openDatabase } from "../../src/db/database.js";
import { migrate, readMigrations } from "../../src/db/migrate.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The files of the PGlite templates (dumpDataDir() tarballs), empty and migrated; undefined on PostgreSQL. */
    pgliteTemplate: { empty: string; migrated: string } | undefined;
  }
}

/**
 * vitest globalSetup: on PGlite (no DATABASE_URL), creates one in-memory
 * database per run and writes its data folder to a temporary file twice: as
 * created (PGlite's initdb), then migrated. createTestDatabase loads one of
 * them for each database it makes: creating a PGlite database costs seconds of
 * CPU, and migrating it as much again, where loading one costs a fraction.
 * In watch mode, they are made again before a rerun when the migrations changed.
 */
export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (process.env.DATABASE_URL?.trim()) {
    project.provide("pgliteTemplate", undefined);
    return undefined;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "pglite-template-"));
  const files = { empty: path.join(dir, "empty.tar.gz"), migrated: path.join(dir, "migrated.tar.gz") };
  const dump = async (db: Database, file: string) => writeFileSync(file, Buffer.from(await (await dumpMemoryDatabase(db)).arrayBuffer()));
  let madeFrom = "";
  const make = async () => {
    const migrations = JSON.stringify(await readMigrations());
    if (migrations === madeFrom) return;
    const db = openDatabase({ kind: "memory" });
    try {
      // Started first: dumpDataDir() waits for the start holding a lock the start's own queries need.
      await db.ping(60_000);
      await dump(db, files.empty);
      await migrate(db, createLogger("silent"));
      await dump(db, files.migrated);
    } finally {
      await db.close();
    }
    madeFrom = migrations;
  };
  await make();
  project.onTestsRerun(make);
  project.provide("pgliteTemplate", files);
  return () => rmSync(dir, { recursive: true, force: true });
}
