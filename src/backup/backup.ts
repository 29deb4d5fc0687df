import type { Database } from "../db/database.js";
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupHeader, gzipped, sealedLines } from "./format.js";
import { BACKUP_TABLES, type BackupTable, type KeptFor, NOT_COPIED, q, schemaVersion, type Tx } from "./tables.js";

const BATCH = 1000;
/** A backup of a large community may take minutes: its one transaction is given a day. */
const TRANSACTION_MS = 24 * 60 * 60_000;

/**
 * Writes a backup of everything (format.ts) through `write`, from one
 * snapshot: a REPEATABLE READ READ ONLY transaction. On PostgreSQL the
 * instances go on serving meanwhile; the embedded database has one connection,
 * which the transaction holds to its end: requests wait for it
 * (docs/OPERATIONS.md says how long). Signed with `signingKey` (BACKUP_SIGNING_KEY)
 * when given; without what `kept` (the retention settings) says is past its time. Returns the rows
 * written per table.
 */
export async function writeBackup(
  db: Database,
  write: (pieces: AsyncIterable<Uint8Array>) => Promise<void>,
  options: { kept: KeptFor; signingKey?: string },
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  await db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      const header: BackupHeader = {
        format: BACKUP_FORMAT,
        version: BACKUP_VERSION,
        schema: await schemaVersion(tx),
        createdAt: new Date().toISOString(),
        source: db.kind,
      };
      await write(gzipped(sealedLines(header, sections(tx, options.kept), counts, options.signingKey)));
    },
    { timeout: TRANSACTION_MS, maxWait: 60_000 },
  );
  return counts;
}

function* sections(tx: Tx, kept: KeptFor): Generator<{ table: string; lines: AsyncIterable<string> }> {
  for (const t of BACKUP_TABLES) yield { table: t.table, lines: rows(tx, t, kept) };
}

/** The table's rows as JSON text, by key, a batch at a time (never the table whole). */
async function* rows(tx: Tx, t: BackupTable, kept: KeptFor): AsyncGenerator<string> {
  const key = t.key.map((c) => `t.${q(c)}`).join(", ");
  const keyOfLast = t.key.map((c) => `x.${q(c)}`).join(", ");
  const dropped = `'{${NOT_COPIED.join(",")}}'::text[]`;
  let last: string | undefined;
  for (;;) {
    const where = [
      t.skip ? `NOT (${t.skip(kept)})` : undefined,
      last !== undefined ? `(${key}) > (SELECT ${keyOfLast} FROM jsonb_populate_record(NULL::${q(t.table)}, $1::jsonb) x)` : undefined,
    ].filter((w) => w !== undefined);
    const batch = await tx.$queryRawUnsafe<{ line: string }[]>(
      `SELECT (to_jsonb(t) - ${dropped})::text AS line FROM ${q(t.table)} t
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${key} LIMIT ${BATCH}`,
      ...(last !== undefined ? [last] : []),
    );
    for (const { line } of batch) yield line;
    if (batch.length < BATCH) return;
    last = batch.at(-1)!.line;
  }
}

/** The rows per table a backup made now would hold (the same skips), from one snapshot: `counts` prints them. */
export async function tableCounts(db: Database, kept: KeptFor): Promise<Record<string, number>> {
  return db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const counts: Record<string, number> = {};
    for (const t of BACKUP_TABLES) {
      const [row] = await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${q(t.table)} t${t.skip ? ` WHERE NOT (${t.skip(kept)})` : ""}`);
      counts[t.table] = row?.n ?? 0;
    }
    return counts;
  });
}
