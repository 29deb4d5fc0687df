import type { PrismaClient } from "../generated/prisma/client.js";
import { display, LIMIT_PROBLEMS, type Problems } from "./import-error.js";
import type { TransferResource } from "./resources.js";

/**
 * The checks of an import, run by the database on the records staged in
 * `import_rows` (transfer.ts), so that no check holds the file in memory.
 * Each names the record by its array and index, as the file has them.
 */
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The staged records of a resource, each as `s` (key, idx, id, row) and `x` (a row of its table). */
export const stagedRows = (r: TransferResource) => `import_rows s CROSS JOIN LATERAL jsonb_populate_record(NULL::${q(r.entity.table)}, s.row) x`;

type Found = Record<string, unknown> & { idx: number; total: bigint | number };

/** The first problems a query finds, ordered by index, with how many there are in all. */
async function find(tx: Tx, problems: Problems, sql: string, params: unknown[], message: (row: Found) => string): Promise<void> {
  const rows = await tx.$queryRawUnsafe<Found[]>(`SELECT *, count(*) OVER () AS total FROM (${sql}) found ORDER BY idx LIMIT ${LIMIT_PROBLEMS}`, ...params);
  if (rows.length > 0) problems.addFound(rows.map(message), Number(rows[0]!.total));
}

/** Within the file: a repeated id, a repeated unique value, an id that would leave its sequence without room. */
export async function checkWithinFile(tx: Tx, r: TransferResource, problems: Problems): Promise<void> {
  const { key } = r;
  const pk = r.entity.primaryKey;
  await find(
    tx,
    problems,
    `SELECT idx, id, first FROM (SELECT s.idx, s.id, min(s.idx) OVER (PARTITION BY s.id) AS first FROM import_rows s WHERE s.key = $1) d WHERE idx <> first`,
    [key],
    (f) => `${key}[${f.idx}].${pk}: ${String(f.id)} repeats ${key}[${String(f.first)}]`,
  );
  // A partial index (its column false for every row an import writes) holds none of the file's rows.
  for (const u of r.entity.unique.filter((c) => !c.where)) {
    const values = u.columns.map((c, i) => `x.${q(c)} AS v${i}`).join(", ");
    const partition = u.columns.map((c) => (u.caseInsensitive ? `lower(x.${q(c)}::text)` : `x.${q(c)}`)).join(", ");
    const present = u.columns.map((c) => `x.${q(c)} IS NOT NULL`).join(" AND ");
    await find(
      tx,
      problems,
      `SELECT * FROM (SELECT s.idx, ${values}, min(s.idx) OVER (PARTITION BY ${partition}) AS first
         FROM ${stagedRows(r)} WHERE s.key = $1 AND ${present}) d WHERE idx <> first`,
      [key],
      (f) =>
        `${key}[${f.idx}].${u.columns.join("+")}: ${u.columns.map((_, i) => display(f[`v${i}`])).join(", ")} repeats ${key}[${String(f.first)}] (unique constraint ${u.constraint})`,
    );
  }
  if (r.entity.generatedKey) {
    // Past half of what the sequence may hand out, an id would leave the API too few (or none: every insert a 500).
    await find(
      tx,
      problems,
      `SELECT s.idx, s.id, m.largest FROM import_rows s,
         (SELECT seqmax / 2 AS largest FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence($2, $3)::regclass) m
        WHERE s.key = $1 AND s.id::numeric > m.largest`,
      [key, q(r.entity.table), pk],
      (f) =>
        `${key}[${f.idx}].${pk}: ${String(f.id)} is past ${String(f.largest)}, the largest id an import may give ` +
        "(half of what the id sequence holds: the other half stays for records created through the API)",
    );
  }
}

/** Against the database, once the resources before this one are written: foreign keys, and unique values held by other ids. */
export async function checkAgainstDatabase(tx: Tx, r: TransferResource, problems: Problems): Promise<void> {
  const { key, entity } = r;
  const pk = entity.primaryKey;
  for (const [column, table] of Object.entries(entity.references)) {
    await find(
      tx,
      problems,
      `SELECT s.idx, x.${q(column)} AS value FROM ${stagedRows(r)}
        WHERE s.key = $1 AND x.${q(column)} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${q(table)} t WHERE t.id = x.${q(column)})`,
      [key],
      (f) => `${key}[${f.idx}].${column}: ${String(f.value)} matches no record of ${table}`,
    );
  }
  // An erased player stays erased (docs/PRIVACY.md): their id is never given again, by an import neither.
  if (entity.table === "players") {
    await find(
      tx,
      problems,
      `SELECT s.idx, x.id AS player, e.id AS receipt FROM ${stagedRows(r)} JOIN player_erasures e ON e."playerId" = x.id WHERE s.key = $1`,
      [key],
      (f) => `${key}[${f.idx}].id: player ${String(f.player)} was erased (receipt ${String(f.receipt)}); an erased player's id is not given again`,
    );
  }
  // A holder that the import itself changes is no conflict: the final state counts.
  for (const u of entity.unique.filter((c) => !c.where)) {
    const on = u.columns.map((c) => `t.${q(c)} = x.${q(c)}`).join(" AND ");
    const values = u.columns.map((c, i) => `x.${q(c)} AS v${i}`).join(", ");
    await find(
      tx,
      problems,
      `SELECT s.idx, t.${q(pk)} AS holder, ${values} FROM ${stagedRows(r)} JOIN ${q(entity.table)} t ON ${on}
        WHERE s.key = $1 AND t.${q(pk)} <> x.${q(pk)}
          AND NOT EXISTS (SELECT 1 FROM import_rows o WHERE o.key = $1 AND o.id = t.${q(pk)}::text)`,
      [key],
      (f) =>
        `${key}[${f.idx}].${u.columns.join("+")}: ${u.columns.map((_, i) => display(f[`v${i}`])).join(", ")} is already used by ${pk} ${String(f.holder)} (unique constraint ${u.constraint})`,
    );
  }
}
