import { ENTITIES } from "../entities/all.js";
import { q, type Tx } from "../transfer/import-checks.js";
import type { SchemaConstraints, TableConstraints } from "./keys.js";

export { q, type Tx };

/** The retention settings a backup's skips follow (core/config.ts). */
export interface KeptFor {
  idempotencyRetainHours: number;
}

export interface BackupTable {
  table: string;
  /** The primary key's columns: the order rows are read and written in. */
  key: string[];
  /** The key is not a serial id (no sequence for a restore to move past the rows). */
  unserial?: true;
  /** Rows left out (SQL, on the table's alias t): what is no longer of use. */
  skip?: (kept: KeptFor) => string;
}

/** An entity's table (entities/all.ts), by its primary key. */
const entityTable = (e: (typeof ENTITIES)[number]): BackupTable =>
  e.generatedKey ? { table: e.table, key: [e.primaryKey] } : { table: e.table, key: [e.primaryKey], unserial: true };

/**
 * Every table a backup holds, in an order that restores them (a table after
 * those its foreign keys name): the API users, every entity in ENTITIES'
 * order, then the service's own. test/backup.test.ts fails when a migration
 * adds a table that is neither here nor in NOT_BACKED_UP.
 */
export const BACKUP_TABLES: readonly BackupTable[] = [
  { table: "api_users", key: ["id"] },
  ...ENTITIES.map(entityTable),
  // After infected_stats: its trigger adds gains to the periods counting, and there are none yet then.
  { table: "leaderboard_periods", key: ["id"] },
  { table: "leaderboard_entries", key: ["periodId", "playerId"], unserial: true },
  { table: "audit_log", key: ["id"] },
  // An answer is replayed for IDEMPOTENCY_RETAIN_HOURS: older ones are of no use (the retention sweep deletes them).
  { table: "idempotency_keys", key: ["apiUserId", "key"], skip: (kept) => `t."createdAt" <= now() - interval '${kept.idempotencyRetainHours} hours'` },
  { table: "webhook_endpoints", key: ["id"] },
  { table: "webhook_events", key: ["id"] },
  { table: "webhook_deliveries", key: ["id"] },
  // Receipts of erasures: a restore re-applies those of ERASURE_LEDGER it does not hold (privacy/reapply.ts).
  { table: "player_erasures", key: ["id"], unserial: true },
];

/** The tables a backup leaves out, and why. */
export const NOT_BACKED_UP: Record<string, string> = {
  _prisma_migrations: "the target is migrated to the backup's schema first",
  data_versions: "counters of the target's own writes (ETags, sync tokens)",
  service_state: "the source's operating switches (a write freeze, a drill's mark): the target has its own",
  sync_identity: "the target keeps its own key: tokens, cursors and event ids from before answer 410",
  version_identity: "the target's own: its ETag versions are renewed by the restore",
};

/**
 * Columns a restore does not copy: the id of the transaction that wrote the
 * row is the source server's; the restoring transaction's own (the column's
 * default) sorts the rows before anything written after the restore.
 */
export const NOT_COPIED = ["writtenBy"];

/** The columns a backup holds for `table` on this database, in their order. */
export async function copiedColumns(tx: Tx, table: string): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ name: string }[]>(
    `SELECT column_name::text AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    table,
  );
  return rows.map((r) => r.name).filter((c) => !NOT_COPIED.includes(c));
}

/** The tables of this database's schema (for the test that keeps BACKUP_TABLES whole). */
export async function schemaTables(tx: Tx): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ name: string }[]>(
    "SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  return rows.map((r) => r.name);
}

/** The last migration applied: a backup is restored into a database at the same one. */
export async function schemaVersion(tx: Tx): Promise<string> {
  const rows = await tx.$queryRawUnsafe<{ name: string }[]>(
    "SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name DESC LIMIT 1",
  );
  return rows[0]?.name ?? "none";
}

/** The unique indexes (on columns, not expressions) and foreign keys of the backed-up tables, from the catalog. */
export async function schemaConstraints(tx: Tx): Promise<SchemaConstraints> {
  const tables = BACKUP_TABLES.map((t) => t.table);
  const unique = await tx.$queryRawUnsafe<{ table: string; name: string; columns: string[]; types: string[]; predicate: string | null }[]>(
    `SELECT c.relname::text AS table, i.indexrelid::regclass::text AS name, pg_get_expr(i.indpred, i.indrelid) AS predicate,
            array_agg(a.attname::text ORDER BY k.ord) AS columns, array_agg(ty.typname::text ORDER BY k.ord) AS types
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
      CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
       JOIN pg_type ty ON ty.oid = a.atttypid
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])
        AND i.indisunique AND i.indexprs IS NULL
      GROUP BY c.relname, i.indexrelid ORDER BY 2`,
    tables,
  );
  const foreign = await tx.$queryRawUnsafe<{ table: string; name: string; columns: string[]; parent: string; parentColumns: string[] }[]>(
    `SELECT c.relname::text AS table, k.conname::text AS name, p.relname::text AS parent,
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY n(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = n.attnum ORDER BY n.ord) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY n(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = n.attnum ORDER BY n.ord) AS "parentColumns"
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[]) ORDER BY 2`,
    tables,
  );
  const byTable = new Map<string, TableConstraints>(tables.map((t) => [t, { unique: [], foreign: [] }]));
  for (const { table, predicate, ...u } of unique) {
    // A partial index over a boolean column's true rows (reward_logs' sent moments); any other predicate is left to the writing pass.
    const where = predicate === null ? undefined : /^"?([A-Za-z_]\w*)"?$/.exec(predicate)?.[1];
    if (predicate === null || where) byTable.get(table)!.unique.push({ ...u, where });
  }
  for (const { table, ...f } of foreign) byTable.get(table)!.foreign.push(f);
  const [folds] = await tx.$queryRawUnsafe<{ folds: boolean }[]>("SELECT lower('É') = 'é' AS folds");
  return { tables: byTable, foldsCase: folds?.folds === true };
}
