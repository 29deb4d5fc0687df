import { Prisma } from "../generated/prisma/client.js";
import type { ReadClient } from "./client.js";

/**
 * What a list route reads, derived from its entity: the table, the answer's
 * SELECT list (a projection's columns, over the table's columns) and the
 * unique integer column the list is ordered by, which is also the keyset of
 * its batches and pages.
 */
export interface ListSource {
  table: string;
  columns: Prisma.Sql;
  key: string;
}

/** The list of an entity's rows in one of its projections (its full record or its summary), ordered by its primary key. */
export function listOf(entity: { table: string; primaryKey: string }, projection: { columns: Prisma.Sql }): ListSource {
  return { table: entity.table, columns: projection.columns, key: entity.primaryKey };
}

/** One batch of a list: its rows as JSON text (comma-separated objects, no brackets), in key order. */
export interface Batch {
  json: string;
  /** The key of the batch's last row; null when it has none. */
  last: number | null;
  /** Whether rows remain after this batch (one more was read to know). */
  more: boolean;
}

/** Read with the first batch, in the same statement, hence under the same snapshot. */
export interface SnapshotFacts {
  /** pg_snapshot_xmin: every transaction below it had ended when the batch was read. */
  xmin: string;
  /** pg_snapshot_xmax: no transaction at or above it had started. */
  xmax: string;
  /** pg_snapshot_xip: the transactions between the two still running, in order (none: []). */
  running: string[];
  /** How many statements had deleted rows of the table (data_versions."deletions"). */
  deletions: string;
  /**
   * The database's sync key, hex (sync_key(), migration 20261125100000_sync_identity): a secret made
   * with the schema, bound to the server, the database and the identity table's own oid, so that a
   * copy, another database or a restore has another. Tokens and cursors are sealed under it.
   */
  key: string;
}

export interface BatchQuery {
  source: ListSource;
  /** Which rows, over the table aliased `t`. */
  where: Prisma.Sql;
  /** The key after which the batch starts; null for the first. */
  after: number | null;
  rows: number;
}

/**
 * One keyset batch, built as JSON text by PostgreSQL: row_to_json writes the
 * bytes JSON.stringify would, in the projection's column order (the answer
 * of a list is byte for byte what one string_agg over the whole table
 * wrote). Each batch is a statement of its own: run on the pool, no
 * transaction or cursor stays open while a client reads, which on PGlite's
 * single connection would hold up every other request. `rows + 1` are read to
 * know whether more remain.
 */
export async function readBatch(db: ReadClient, query: BatchQuery): Promise<Batch>;
export async function readBatch(db: ReadClient, query: BatchQuery, snapshot: true): Promise<Batch & SnapshotFacts>;
export async function readBatch(db: ReadClient, query: BatchQuery, snapshot = false): Promise<Batch & Partial<SnapshotFacts>> {
  const { source, rows } = query;
  const facts = snapshot
    ? Prisma.sql`, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
                 (SELECT coalesce(string_agg(x::text, ',' ORDER BY x), '') FROM pg_snapshot_xip(pg_current_snapshot()) x) AS running,
                 (SELECT deletions::text FROM data_versions WHERE name = ${source.table}) AS deletions, sync_key() AS key`
    : Prisma.empty;
  const [batch] = await db.$queryRaw<(Omit<Batch, "more"> & { read: number; running?: string } & Partial<Omit<SnapshotFacts, "running">>)[]>(Prisma.sql`
    SELECT coalesce(string_agg(x.j, ',' ORDER BY x.k) FILTER (WHERE x.n <= ${rows}), '') AS json,
           (max(x.k) FILTER (WHERE x.n <= ${rows}))::int AS last, count(*)::int AS read ${facts}
      FROM (SELECT ${keyOf(source)} AS k, ${ROW_JSON} AS j, row_number() OVER (ORDER BY ${keyOf(source)}) AS n
              FROM ${rowsOf(query)} LIMIT ${rows + 1}) x`);
  const { read, running, ...rest } = batch!;
  return { ...rest, more: read > rows, deletions: rest.deletions ?? "0", running: running ? running.split(",") : [] };
}

/**
 * The rest of a list after `after` as one statement, a row each (its JSON,
 * as readBatch writes it), in key order: what a cursor reads a batch at a
 * time (ListSnapshot.cursor).
 */
export function rowsAfter(query: Omit<BatchQuery, "rows">): Prisma.Sql {
  return Prisma.sql`SELECT ${ROW_JSON} FROM ${rowsOf(query)}`;
}

/** A row of the list as JSON text, over its projection `r`. */
const ROW_JSON = Prisma.sql`row_to_json(r)::text`;

const keyOf = (source: ListSource) => Prisma.raw(`t."${source.key}"`);

/** The list's rows after `after` in key order, its projection as `r`: the FROM clause onwards. */
function rowsOf({ source, where, after }: Omit<BatchQuery, "rows">): Prisma.Sql {
  const key = keyOf(source);
  return Prisma.sql`${Prisma.raw(`"${source.table}"`)} t CROSS JOIN LATERAL (SELECT ${source.columns}) r
             WHERE (${where}) ${after === null ? Prisma.empty : Prisma.sql`AND ${key} > ${after}`}
             ORDER BY ${key}`;
}

/**
 * The column of a listed table stamped by a trigger with the transaction that
 * last wrote the row (migration 20261123100000_row_changes): bookkeeping of
 * the sync, not a field of the entity.
 */
export const WRITTEN_BY = "writtenBy";

/**
 * Rows written (inserted or updated) by a transaction at or after `from`, or
 * by one of `running`: what a sync asks for. Both use the column's index.
 */
export function writtenSince(from: string, running: readonly string[]): Prisma.Sql {
  const column = Prisma.raw(`t."${WRITTEN_BY}"`);
  const since = Prisma.sql`${column} >= ${from}::bigint`;
  if (running.length === 0) return since;
  return Prisma.sql`(${since} OR ${column} IN (${Prisma.join(running.map((id) => Prisma.sql`${id}::bigint`))}))`;
}

export const ALL_ROWS = Prisma.sql`TRUE`;

/** A whole list as one JSON array, batch after batch (for tools and tests; the service streams it, lists/list.ts). */
export async function readAll(db: ReadClient, source: ListSource, where = ALL_ROWS, rows = 2000): Promise<string> {
  const parts: string[] = [];
  let after: number | null = null;
  for (;;) {
    const batch: Batch = await readBatch(db, { source, where, after, rows });
    if (batch.json !== "") parts.push(batch.json);
    if (!batch.more) return `[${parts.join(",")}]`;
    after = batch.last;
  }
}
