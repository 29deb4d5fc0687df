import { recordAudit, type AuditSource } from "../audit/audit.js";
import { advanceIdSequence, largestId } from "../db/constraints.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import { formatTimestamp } from "../fields/timestamp.js";
import { issueMessages, PARSE_OPTIONS } from "../http/validation.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { eventCtes, IMPORT_KINDS } from "../webhooks/events.js";
import { TRANSFER_RESOURCES, type TransferResource } from "./resources.js";

/**
 * Operator import and export of a community's data, in the API's own shapes:
 * `{ players: [...], cosmetics: [...], ... }`.
 *
 * Import is all or nothing: the whole file is validated first (every error
 * names its array, index and field), then every record is upserted by id in
 * one transaction, and the id sequences are moved past the imported ids so
 * that records created later through the API do not collide with them. A
 * sequence only moves forward: an id it handed out to an insert still in
 * flight (no MAX(id) can see it) stays behind it.
 */
export class ImportError extends Error {
  static readonly HEADING = "Import refused, nothing was written:";
  constructor(readonly problems: string[]) {
    super(`${ImportError.HEADING}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ImportError";
  }
}

export type ImportSummary = Record<string, number>;

const MAX_PROBLEMS = 20;
const BATCH = 1000;

export async function exportData(prisma: PrismaClient): Promise<Record<string, unknown[]>> {
  const data: Record<string, unknown[]> = {};
  for (const r of TRANSFER_RESOURCES) data[r.key] = await r.exportAll(prisma);
  return data;
}

function validate(data: unknown): Map<TransferResource, Record<string, unknown>[]> {
  const problems: string[] = [];
  const parsed = new Map<TransferResource, Record<string, unknown>[]>();
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ImportError([`the file must hold a JSON object with the arrays ${TRANSFER_RESOURCES.map((r) => r.key).join(", ")}`]);
  }
  const known = new Set(TRANSFER_RESOURCES.map((r) => r.key));
  for (const key of Object.keys(data)) {
    if (!known.has(key)) problems.push(`${key}: unknown array (expected one of ${[...known].join(", ")})`);
  }
  for (const r of TRANSFER_RESOURCES) {
    const records = (data as Record<string, unknown>)[r.key];
    if (records === undefined) continue;
    if (!Array.isArray(records)) {
      problems.push(`${r.key}: expected an array`);
      continue;
    }
    const rows: Record<string, unknown>[] = [];
    const seen = new Map<string, number>();
    const seenUnique = r.entity.unique.map(() => new Map<string, number>());
    records.forEach((record, index) => {
      const result = r.entity.record.safeParse(record, PARSE_OPTIONS);
      if (!result.success) {
        problems.push(...issueMessages(result.error, `${r.key}[${index}].`));
        return;
      }
      const row = result.data;
      const id = String(row[r.entity.primaryKey]);
      const first = seen.get(id);
      if (first !== undefined) problems.push(`${r.key}[${index}].${r.entity.primaryKey}: ${id} repeats ${r.key}[${first}]`);
      else seen.set(id, index);
      r.entity.unique.forEach((u, i) => {
        const values = u.columns.map((c) => row[c]);
        if (values.some((v) => v === null || v === undefined)) return; // NULLs never collide
        const joined = values.map(display).join(", ");
        const key = u.caseInsensitive ? joined.toLowerCase() : joined;
        const other = seenUnique[i]!.get(key);
        if (other !== undefined) {
          problems.push(`${r.key}[${index}].${u.columns.join("+")}: ${joined} repeats ${r.key}[${other}] (unique constraint ${u.constraint})`);
        } else seenUnique[i]!.set(key, index);
      });
      rows.push(row);
    });
    parsed.set(r, rows);
  }
  if (problems.length > 0) throw new ImportError(truncate(problems));
  return parsed;
}

function truncate(problems: string[]): string[] {
  return problems.length > MAX_PROBLEMS
    ? [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`]
    : problems;
}

function display(value: unknown): string {
  if (value instanceof Date) return formatTimestamp(value);
  return typeof value === "string" ? `'${value}'` : String(value);
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

function serialise(row: Record<string, unknown>): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) json[k] = v instanceof Date ? v.toISOString() : v;
  return json;
}

type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/** Imports all or nothing; `by`, when given, gets one audit entry (in the same transaction) counting what was imported. */
export async function importData(prisma: PrismaClient, data: unknown, by?: AuditSource): Promise<ImportSummary> {
  const parsed = validate(data);
  const summary: ImportSummary = {};
  await prisma.$transaction(
    async (tx) => {
      for (const [r, rows] of parsed) {
        if (rows.length === 0) continue;
        await checkReferences(tx, r, rows);
        await checkUniqueAgainstDatabase(tx, r, rows);
        // Before the rows go in: inserts through the API meanwhile draw ids past the imported ones.
        if (r.entity.generatedKey) await moveSequencePast(tx, r, rows);
        await upsert(tx, r, rows);
        summary[r.key] = rows.length;
      }
      if (by) await recordAudit(tx, { ...by, action: "data.import", target: "import", changes: { ...summary } });
    },
    { timeout: 10 * 60_000, maxWait: 60_000 },
  );
  return summary;
}

async function moveSequencePast(tx: Tx, r: TransferResource, rows: Record<string, unknown>[]): Promise<void> {
  const { table, primaryKey } = r.entity;
  const imported = rows.reduce((max, row) => Math.max(max, Number(row[primaryKey])), 0);
  await tx.$queryRaw(advanceIdSequence(table, primaryKey, Prisma.sql`SELECT GREATEST(${imported}::bigint, (${largestId(table, primaryKey)}))`));
}

async function upsert(tx: Tx, r: TransferResource, rows: Record<string, unknown>[]): Promise<void> {
  const columns = Object.keys(rows[0]!);
  const list = columns.map(q).join(", ");
  const updates = columns.filter((c) => c !== r.entity.primaryKey).map((c) => `${q(c)} = EXCLUDED.${q(c)}`).join(", ");
  // Each record written announces itself (xmax = 0: inserted), in the same statement.
  const kind = IMPORT_KINDS[r.key as keyof typeof IMPORT_KINDS];
  const upsertSql = (json: string) => Prisma.sql`WITH w AS (
    INSERT INTO ${Prisma.raw(q(r.entity.table))} (${Prisma.raw(list)}) SELECT ${Prisma.raw(list)} FROM jsonb_populate_recordset(NULL::${Prisma.raw(q(r.entity.table))}, ${json}::jsonb)
    ON CONFLICT (${Prisma.raw(q(r.entity.primaryKey))}) DO UPDATE SET ${Prisma.raw(updates)} RETURNING *, (xmax = 0) AS webhook_inserted)${eventCtes({
      type: Prisma.sql`CASE WHEN w.webhook_inserted THEN ${`${kind}.created`} ELSE ${`${kind}.updated`} END::varchar`,
      // As the API answers it to every caller: a player without its sensitive fields (token, ip…).
      columns: (r.entity.summary ?? r.entity.full).columns,
    })}
    SELECT count(*)::int AS n FROM w`;
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    try {
      await tx.$queryRaw(upsertSql(JSON.stringify(batch.map(serialise))));
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

/** Names the record whose foreign key points nowhere, rather than letting PostgreSQL refuse the batch. */
async function checkReferences(tx: Tx, r: TransferResource, rows: Record<string, unknown>[]): Promise<void> {
  const problems: string[] = [];
  for (const [column, table] of Object.entries(r.entity.references)) {
    const ids = [...new Set(rows.map((row) => Number(row[column])))];
    const found = await tx.$queryRawUnsafe<{ id: number }[]>(
      `SELECT id FROM ${q(table)} WHERE id IN (SELECT value::int FROM jsonb_array_elements_text($1::jsonb))`,
      JSON.stringify(ids),
    );
    const existing = new Set(found.map((f) => Number(f.id)));
    rows.forEach((row, index) => {
      if (!existing.has(Number(row[column]))) {
        problems.push(`${r.key}[${index}].${column}: ${String(row[column])} matches no record of ${table}`);
      }
    });
  }
  if (problems.length > 0) throw new ImportError(truncate(problems));
}

/**
 * A unique value already held in the database by a record of another id that
 * this import does not change: named with its index, value and constraint.
 * (A holder that the import itself renames is no conflict; the final state
 * counts.) The comparison joins on the table's own column types, so citext
 * columns compare case-insensitively as the index does.
 */
async function checkUniqueAgainstDatabase(tx: Tx, r: TransferResource, rows: Record<string, unknown>[]): Promise<void> {
  const problems: string[] = [];
  const importedIds = new Set(rows.map((row) => String(row[r.entity.primaryKey])));
  const json = JSON.stringify(rows.map(serialise));
  for (const u of r.entity.unique) {
    const on = u.columns.map((c) => `t.${q(c)} = x.${q(c)}`).join(" AND ");
    const taken = await tx.$queryRawUnsafe<{ holder: number; imported: number }[]>(
      `SELECT t.${q(r.entity.primaryKey)} AS holder, x.${q(r.entity.primaryKey)} AS imported
         FROM jsonb_populate_recordset(NULL::${q(r.entity.table)}, $1::jsonb) x
         JOIN ${q(r.entity.table)} t ON ${on}
        WHERE t.${q(r.entity.primaryKey)} <> x.${q(r.entity.primaryKey)}`,
      json,
    );
    const indexOf = new Map(rows.map((row, index) => [String(row[r.entity.primaryKey]), index]));
    for (const { holder, imported } of taken) {
      if (importedIds.has(String(holder))) continue;
      const index = indexOf.get(String(imported))!;
      const value = u.columns.map((c) => display(rows[index]![c])).join(", ");
      problems.push(
        `${r.key}[${index}].${u.columns.join("+")}: ${value} is already used by ${r.entity.primaryKey} ${holder} (unique constraint ${u.constraint})`,
      );
    }
  }
  if (problems.length > 0) throw new ImportError(truncate(problems));
}
