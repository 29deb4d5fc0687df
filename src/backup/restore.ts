import { type AuditSource, OPERATOR } from "../audit/audit.js";
import type { Database } from "../db/database.js";
import { markDrill } from "../db/service-state.js";
import { renewVersions } from "../db/versions.js";
import { advanceIdSequence, largestId } from "../entities/constraints.js";
import { type ReappliedErasures, reapplyErasures } from "../privacy/reapply.js";
import { shownUrl } from "../webhooks/manage.js";
import { openSecret, SecretUnavailable } from "../webhooks/secrets.js";
import { type BackupTrust, type CheckTarget, checkEndpoint, checkRecord, checkSignature, columnProblem, ENTITY_OF } from "./checks.js";

export type { BackupTrust } from "./checks.js";

import { BackupFileError, type BackupHeader, readBackup } from "./format.js";
import { KeyCheck } from "./keys.js";
import { BACKUP_TABLES, copiedColumns, q, schemaConstraints, schemaVersion, type Tx } from "./tables.js";

/** The target cannot take the backup (not empty, another schema): nothing was written. */
export class RestoreRefused extends Error {}

export interface RestoredBackup extends CheckedBackup {
  /** The erasures of the ledger the backup did not hold, re-applied (docs/PRIVACY.md). */
  erasures: ReappliedErasures;
}

export interface CheckedBackup {
  header: BackupHeader;
  counts: Record<string, number>;
  /** The SHA-256 the file ends with: a second reading must end with the same. */
  seal: string;
  /** Signed with the BACKUP_SIGNING_KEY given. */
  signed: boolean;
  /** What a restore would install that grants access or sends data out: the API users, the webhook endpoints (URLs as listings show them). */
  installs: { users: { username: string; role: string; revoked: boolean }[]; endpoints: { id: number; url: string; events: string[] }[]; erasures: string[] };
  /** What the restored service will lack (a webhook secret's key): said, not refused. */
  warnings: string[];
}

const BATCH = 1000;
/** See transfer.ts: Prisma's adapters keep the arguments of their last 100 queries. */
const BATCH_CHARS = 64 * 1024;
const TRANSACTION_MS = 24 * 60 * 60_000;
const KNOWN = new Set(BACKUP_TABLES.map((t) => t.table));
const KEY_OF = new Map(BACKUP_TABLES.map((t) => [t.table, t.key]));

/** Reads a backup through, checking every line, its counts, its SHA-256 and its signature; writes nothing. */
export async function checkBackup(
  source: AsyncIterable<Uint8Array>,
  secretKey: string | undefined,
  trust: BackupTrust = {},
  target?: CheckTarget,
): Promise<CheckedBackup> {
  let header: BackupHeader | undefined;
  const secrets = new Map<string, number>();
  const installs: CheckedBackup["installs"] = { users: [], endpoints: [], erasures: [] };
  // Against the target's columns when it is at the file's schema (at another, restore refuses the file whole).
  let columns: string[] | undefined;
  let known = new Set<string>();
  let keys: KeyCheck | undefined;
  for await (const entry of readBackup(source)) {
    if (entry.kind === "row" && columns && (Object.keys(entry.row).length !== known.size || !Object.keys(entry.row).every((k) => known.has(k)))) {
      const problem = columnProblem(entry.table, columns, Object.keys(entry.row))!;
      throw new BackupFileError(`${problem.replace(/^The/, "the").replace(/\.$/, "")}: the file was altered or made by another version`);
    }
    if (entry.kind === "header") header = entry.header;
    else if (entry.kind === "table" && !KNOWN.has(entry.table)) throw new BackupFileError(`it holds a table this service does not have: ${entry.table}`);
    else if (entry.kind === "table") {
      const atSchema = target && header?.schema === target.schema;
      columns = atSchema ? await target.columns(entry.table) : undefined;
      known = new Set(columns);
      if (atSchema) keys ??= new KeyCheck(await target.constraints());
      keys?.table(entry.table, KEY_OF.get(entry.table)!);
    } else if (entry.kind === "row" && ENTITY_OF.has(entry.table)) checkRecord(entry.table, entry.row);
    else if (entry.kind === "row" && entry.table === "api_users") {
      const { username, role, revokedAt } = entry.row;
      installs.users.push({ username: String(username), role: String(role), revoked: revokedAt !== null && revokedAt !== undefined });
    } else if (entry.kind === "row" && entry.table === "player_erasures") installs.erasures.push(String(entry.row.id));
    else if (entry.kind === "row" && entry.table === "webhook_endpoints") {
      checkEndpoint(entry.row);
      installs.endpoints.push({ id: Number(entry.row.id), url: shownUrl(String(entry.row.url)), events: entry.row.events as string[] });
      try {
        openSecret(String(entry.row.secret), secretKey);
      } catch (error) {
        if (!(error instanceof SecretUnavailable)) throw error;
        secrets.set(error.message, (secrets.get(error.message) ?? 0) + 1);
      }
    } else if (entry.kind === "end") {
      keys?.end();
      const warnings = [...secrets].map(
        ([why, n]) =>
          `${n} webhook secret${n === 1 ? "" : "s"}: ${why}. They are restored as they are; set WEBHOOKS_SECRET_KEY to the key of the server the backup ` +
          "came from (on every instance), or those webhooks cannot sign their deliveries.",
      );
      const untrusted = checkSignature(entry.seal, entry.signature, trust);
      if (untrusted) warnings.push(untrusted);
      if (target && header && header.schema !== target.schema) {
        warnings.push(
          `it was made at schema ${header.schema}; this database is at ${target.schema}: this version refuses to restore it (restore it with the version that made it, then upgrade).`,
        );
      }
      const signed = trust.signingKey !== undefined && untrusted === undefined;
      return { header: header!, counts: entry.counts, seal: entry.seal, signed, installs, warnings };
    }
    if (entry.kind === "row") keys?.row(entry.row);
  }
  throw new BackupFileError("the file ends without its end line: the file is truncated");
}

/** This database, as a file is checked against it. */
export function checkTarget(tx: Tx, schema: string): CheckTarget {
  return { schema, columns: (table) => copiedColumns(tx, table), constraints: () => schemaConstraints(tx) };
}

/** The tables of `tx` that hold a row (a database a restore would mix into). */
async function tablesWithRows(tx: Tx): Promise<string[]> {
  const found: string[] = [];
  for (const { table } of BACKUP_TABLES) {
    const [row] = await tx.$queryRawUnsafe<{ any: boolean }[]>(`SELECT EXISTS (SELECT 1 FROM ${q(table)}) AS any`);
    if (row?.any) found.push(table);
  }
  return found;
}

async function refuseUnlessEmpty(tx: Tx): Promise<void> {
  const full = await tablesWithRows(tx);
  if (full.length > 0) {
    throw new RestoreRefused(
      `The database already holds data (${full.join(", ")}): a backup is restored into an empty database only, so that nothing is mixed. ` +
        "Restore into a new database (a new DATA_DIR, or a database made with createdb) before any server starts on it.",
    );
  }
}

/**
 * Restores a backup into this (migrated) database, if it is empty: first the
 * whole file is read and checked (`open` gives it anew), then every row is
 * written in one transaction, read again and checked again as it goes, so that
 * a file refused or a failure midway leaves the database as it was.
 * sync_identity is not written: the database keeps its own key, and every
 * sync token, cursor and event id from before answers 410; the ETag versions
 * move past anything the backed-up database counted (renewVersions). `drill`
 * marks the database a drill's copy. The erasures of `ledger` (ERASURE_LEDGER)
 * the backup does not hold are re-applied in the same transaction.
 */
export async function restoreBackup(
  db: Database,
  open: () => AsyncIterable<Uint8Array>,
  secretKey: string | undefined,
  options: { drill?: boolean; ledger?: string | undefined; source?: AuditSource } & BackupTrust = {},
): Promise<RestoredBackup> {
  await refuseUnlessEmpty(db.prisma);
  const here = await schemaVersion(db.prisma);
  const checked = await checkBackup(open(), secretKey, options, checkTarget(db.prisma, here));
  if (checked.header.schema !== here) {
    throw new RestoreRefused(
      `The backup was made at schema ${checked.header.schema}; this database is at ${here}. ` +
        "Restore it with the version of the service that made it (into a database it migrates), then upgrade.",
    );
  }
  const erasures = await db.prisma.$transaction(
    async (tx) => {
      await refuseUnlessEmpty(tx);
      // Read again as it is written: the same bytes as the check's, or nothing is kept.
      if ((await writeRows(tx, open())) !== checked.seal) {
        throw new RestoreRefused("The file changed between its check and its restore (its SHA-256 is not the same): restore a file nothing else writes to.");
      }
      for (const { table, key, unserial } of BACKUP_TABLES) {
        if (key.length !== 1 || key[0] !== "id" || unserial) continue;
        await refuseExhaustedSequence(tx, table);
        await tx.$queryRaw(advanceIdSequence(table, "id", largestId(table, "id")));
      }
      await renewVersions(tx, true);
      // DRILL_MODE=true: a server starts on this copy only in drill mode (service/server.ts).
      if (options.drill) await markDrill(tx, { backupMadeAt: checked.header.createdAt });
      // A drill's copy takes the ledger's erasures and gives it none; so does a file not known to be this community's.
      const record = !options.drill && (!options.signingKey || checked.signed);
      return reapplyErasures(tx, options.ledger, options.source ?? OPERATOR, record);
    },
    { timeout: TRANSACTION_MS, maxWait: 60_000 },
  );
  return { ...checked, erasures };
}

/** As an import does (transfer/import-checks.ts): an id past half of its sequence would leave the API too few, or none. */
async function refuseExhaustedSequence(tx: Tx, table: string): Promise<void> {
  const [row] = await tx.$queryRawUnsafe<{ id: string | null; largest: string }[]>(
    `SELECT (SELECT max(id) FROM ${q(table)})::text AS id, (seqmax / 2)::text AS largest
       FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence($1, 'id')::regclass`,
    q(table),
  );
  if (row?.id && BigInt(row.id) > BigInt(row.largest)) {
    throw new RestoreRefused(
      `The backup's ${table} hold id ${row.id}, past ${row.largest}, the largest a restore may give (half of what the id sequence holds: ` +
        "the other half stays for records created through the API). The file was altered, or comes from another service.",
    );
  }
}

/** Writes the rows as they are read (each table and row checked again), and returns the seal the file ended with. */
async function writeRows(tx: Tx, source: AsyncIterable<Uint8Array>): Promise<string | undefined> {
  let table: string | undefined;
  let columns: string[] = [];
  let known = new Set<string>();
  let batch: string[] = [];
  let chars = 0;
  let seal: string | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    const list = columns.map(q).join(", ");
    const json = `[${batch.join(",")}]`;
    batch = [];
    chars = 0;
    await tx
      .$executeRawUnsafe(`INSERT INTO ${q(table!)} (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::${q(table!)}, $1::jsonb)`, json)
      .catch((error: unknown) => {
        throw new RestoreRefused(`The database refuses a row of the backup's ${table} (${databaseMessage(error)}): the file was altered or is not a backup.`);
      });
  };
  for await (const entry of readBackup(source)) {
    if (entry.kind === "table") {
      await flush();
      if (!KNOWN.has(entry.table)) throw new RestoreRefused(`The file holds a table this service does not have: ${entry.table}.`);
      table = entry.table;
      columns = await copiedColumns(tx, table);
      known = new Set(columns);
    } else if (entry.kind === "row") {
      const keys = Object.keys(entry.row);
      if (keys.length !== columns.length || !keys.every((k) => known.has(k))) sameColumns(entry.table, columns, keys);
      batch.push(entry.line);
      chars += entry.line.length;
      if (batch.length >= BATCH || chars >= BATCH_CHARS) await flush();
    } else if (entry.kind === "end") {
      seal = entry.seal;
    }
  }
  await flush();
  return seal;
}

/** PostgreSQL's own words for a refused statement, on one line (never Prisma's, which name the install's paths). */
function databaseMessage(error: unknown): string {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { originalMessage?: string } } } }).meta?.driverAdapterError?.cause;
  const text = cause?.originalMessage ?? (error instanceof Error ? error.message : String(error));
  return text.split("\n").filter(Boolean).at(-1)!.slice(0, 300);
}

function sameColumns(table: string, here: string[], there: string[]): void {
  const problem = columnProblem(table, here, there);
  if (problem) throw new RestoreRefused(problem);
}
