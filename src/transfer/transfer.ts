import { type AuditSource, recordAudit } from "../audit/audit.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import { advanceIdSequence, largestId } from "../entities/constraints.js";
import { eventCtes } from "../events/record.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { issueMessages, PARSE_OPTIONS } from "../http/validation.js";
import { checkAgainstDatabase, checkWithinFile, q, stagedRows, type Tx } from "./import-checks.js";
import { ImportError, Problems } from "./import-error.js";
import { FileShapeError, fileParts } from "./json-records.js";
import { TRANSFER_RESOURCES, type TransferResource } from "./resources.js";

export { ImportError } from "./import-error.js";

/**
 * Operator import and export of a community's data, in the API's own shapes (`{ players: [...], ... }`;
 * docs/OPERATIONS.md, "Import an existing community"). An import is all or nothing, in one transaction,
 * never holding the file: each record is validated as it is read and staged, the database checks the
 * whole (repeats, references, unique values), then every record is upserted by id, and the id sequences
 * move past the imported ids (forward only: an id handed to an insert in flight stays behind them).
 */
export type ImportSummary = Record<string, number>;

const BATCH = 1000;
/**
 * A batch of staged records is written at this many characters of JSON, or at BATCH records.
 * Small on purpose: Prisma's driver adapters keep the arguments of their last 100 queries in
 * memory (@prisma/debug's history, even with debugging off), so 1 MB batches held 100 MB.
 */
const BATCH_CHARS = 64 * 1024;

/** The whole export as one object (tests; the CLI writes it in pieces: export.ts). */
export async function exportData(prisma: PrismaClient): Promise<Record<string, unknown[]>> {
  const data: Record<string, unknown[]> = {};
  for (const r of TRANSFER_RESOURCES) data[r.key] = await r.exportAll(prisma);
  return data;
}

function serialise(row: Record<string, unknown>): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) json[k] = v instanceof Date ? v.toISOString() : v;
  return json;
}

interface Staged {
  count: number;
  /** The columns the records give (every record gives the same). */
  columns?: string[];
}

/** Imports a file read in pieces (see fileParts), all or nothing; `by`, when given, gets one audit entry counting what was imported. */
export async function importStream(
  prisma: PrismaClient,
  source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  by?: AuditSource,
): Promise<ImportSummary> {
  const summary: ImportSummary = {};
  await prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(
        "CREATE TEMP TABLE import_rows (key text NOT NULL, idx int NOT NULL, id text NOT NULL, row jsonb NOT NULL, PRIMARY KEY (key, idx)) ON COMMIT DROP",
      );
      await tx.$executeRawUnsafe("CREATE INDEX ON import_rows (key, id)");
      const staged = await stage(tx, source);
      const problems = new Problems();
      for (const r of staged.keys()) await checkWithinFile(tx, r, problems);
      problems.check();
      for (const [r, { count, columns }] of staged) {
        if (count === 0 || !columns) continue;
        await checkAgainstDatabase(tx, r, problems);
        problems.check();
        // Before the rows go in: inserts through the API meanwhile draw ids past the imported ones.
        if (r.entity.generatedKey) await moveSequencePast(tx, r);
        await upsert(tx, r, columns, count);
        summary[r.key] = count;
      }
      if (by) await recordAudit(tx, { ...by, action: "data.import", target: "import", changes: { ...summary } });
    },
    { timeout: 10 * 60_000, maxWait: 60_000 },
  );
  return summary;
}

/** Imports data already in memory (the sample, tests): the same path as a file. */
export function importData(prisma: PrismaClient, data: unknown, by?: AuditSource): Promise<ImportSummary> {
  return importStream(prisma, [JSON.stringify(data) ?? ""], by);
}

/** Reads the file, validating each record and staging the valid ones; the resources it holds, in TRANSFER_RESOURCES order. */
async function stage(tx: Tx, source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<Map<TransferResource, Staged>> {
  const known = new Map(TRANSFER_RESOURCES.map((r) => [r.key, r]));
  const expected = `expected one of ${[...known.keys()].join(", ")}`;
  const found = new Map<TransferResource, Staged>();
  const seen = new Set<string>();
  const problems = new Problems();
  let batch: { key: string; idx: number; id: string; row: Record<string, unknown> }[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const json = JSON.stringify(batch);
    batch = [];
    chars = 0;
    await tx.$executeRawUnsafe("INSERT INTO import_rows SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(key text, idx int, id text, row jsonb)", json);
  };
  try {
    for await (const part of fileParts(source)) {
      const r = known.get(part.key);
      if (part.kind !== "record") {
        if (!r) problems.add(`${part.key}: unknown array (${expected})`);
        else if (part.kind === "other") problems.add(`${part.key}: expected an array`);
        else if (seen.has(part.key)) problems.add(`${part.key}: appears twice in the file`);
        else found.set(r, { count: 0 });
        seen.add(part.key);
        continue;
      }
      const staged = r && found.get(r);
      if (!r || !staged) continue;
      let record: unknown;
      try {
        record = JSON.parse(part.text);
      } catch (error) {
        problems.add(`${part.key}[${part.index}]: not valid JSON (${(error as Error).message})`);
        continue;
      }
      const result = r.entity.record.safeParse(record, PARSE_OPTIONS);
      if (!result.success) {
        problems.add(...issueMessages(result.error, `${part.key}[${part.index}].`));
        continue;
      }
      staged.count++;
      if (problems.any) continue; // nothing will be written: only the reading goes on, for the other problems
      const row = serialise(result.data);
      staged.columns ??= Object.keys(row);
      batch.push({ key: part.key, idx: part.index, id: String(row[r.entity.primaryKey]), row });
      chars += part.text.length;
      if (batch.length >= BATCH || chars >= BATCH_CHARS) await flush();
    }
  } catch (error) {
    if (!(error instanceof FileShapeError)) throw error;
    if (error.notAnObject) throw new ImportError([`the file must hold a JSON object with the arrays ${[...known.keys()].join(", ")}`]);
    problems.add(error.message);
  }
  problems.check();
  await flush();
  return new Map(TRANSFER_RESOURCES.flatMap((r) => (found.has(r) ? [[r, found.get(r)!] as const] : [])));
}

async function moveSequencePast(tx: Tx, r: TransferResource): Promise<void> {
  const { table, primaryKey } = r.entity;
  const imported = Prisma.sql`SELECT max(id::bigint) FROM import_rows WHERE key = ${r.key}`;
  await tx.$queryRaw(advanceIdSequence(table, primaryKey, Prisma.sql`SELECT GREATEST((${imported}), (${largestId(table, primaryKey)}))`));
}

async function upsert(tx: Tx, r: TransferResource, columns: string[], count: number): Promise<void> {
  const list = columns.map(q).join(", ");
  const values = columns.map((c) => `x.${q(c)}`).join(", ");
  const updates = columns
    .filter((c) => c !== r.entity.primaryKey)
    .map((c) => `${q(c)} = EXCLUDED.${q(c)}`)
    .join(", ");
  // Each record written announces itself (xmax = 0: inserted), in the same statement.
  const { kind } = r.entity;
  const upsertSql = (from: number) => Prisma.sql`WITH w AS (
    INSERT INTO ${Prisma.raw(q(r.entity.table))} (${Prisma.raw(list)})
    SELECT ${Prisma.raw(values)} FROM ${Prisma.raw(stagedRows(r))} WHERE s.key = ${r.key} AND s.idx >= ${from} AND s.idx < ${from + BATCH} ORDER BY s.idx
    ON CONFLICT (${Prisma.raw(q(r.entity.primaryKey))}) DO UPDATE SET ${Prisma.raw(updates)} RETURNING *, (xmax = 0) AS webhook_inserted)${eventCtes({
      type: Prisma.sql`CASE WHEN w.webhook_inserted THEN ${`${kind}.created`} ELSE ${`${kind}.updated`} END::varchar`,
      // As the API answers it to every caller: a player without its sensitive fields (token, ip…).
      columns: (r.entity.summary ?? r.entity.full).columns,
    })}
    SELECT count(*)::int AS n FROM w`;
  for (let from = 0; from < count; from += BATCH) {
    try {
      await tx.$queryRaw(upsertSql(from));
    } catch (error) {
      const violation = uniqueViolation(error);
      if (violation) {
        // Values that move between records in one import (a swap) collide while rows are applied in order.
        throw new ImportError([
          `${r.key}: unique constraint ${violation.constraint ?? "unknown"} was violated while applying the records in order; ` +
            "values that move from one record to another (a swap) must be imported in two steps",
        ]);
      }
      throw error;
    }
  }
}
