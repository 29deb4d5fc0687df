import os from "node:os";
import type { DbClient } from "../db/client.js";
import { RowUpdate } from "../db/sql.js";
import { eventCtes, type RowEvent } from "../events/record.js";
import { Prisma } from "../generated/prisma/client.js";

/**
 * The audit log: one row per write, written atomically with it (the same
 * statement, auditedWrite, or the same transaction, recordAudit), so a change
 * that rolls back leaves no entry and a committed one always has one. Entries name who (the API user, or the operator at the CLI), what,
 * on which record, and the fields written with their new values and, for an
 * update, the values they replaced — never key material (keys, their hashes or
 * hints) nor webhook secrets.
 */
export type AuditAction =
  | "cosmetic.update"
  | "world.update"
  | "form.create"
  | "reward_log.create"
  | "api_user.register"
  | "api_user.rotate"
  | "api_user.revoke"
  /** Data loaded by the operator (`import`): the counts per kind of record. */
  | "data.import"
  /** The user's IP allow-list set or cleared (`user allow-ip`). */
  | "api_user.allow_ip"
  /** A request refused because of its client address (per-user IP allow-lists). */
  | "api_user.refused_ip"
  /** Webhook endpoints added and removed, deliveries sent again (CLI `webhook …`). */
  | "webhook.add"
  | "webhook.remove"
  | "webhook.redeliver"
  /** Every write refused until `thaw` (CLI `freeze`, the reason in changes), and let through again. */
  | "service.freeze"
  | "service.thaw"
  /** A player's personal data exported (POST /admin/players/export): the rows per part. */
  | "player.export"
  /** A player erased (POST /admin/players/erase, CLI `erase`, or re-applied by a restore): the receipt's id, the rows removed. */
  | "player.erase"
  /** A leaderboard season started or ended (POST /admin/seasons/start, /end; CLI `season`). */
  | "season.start"
  | "season.end";

/** Who made the change, and from which request. */
export interface AuditSource {
  /** The API username, or `cli:<os user>` for the operator's command line. */
  actor: string;
  requestId?: string | null;
  clientAddress?: string | null;
}

export interface AuditEntry {
  action: AuditAction;
  /** The record, as `<kind>:<id>` (`cosmetic:12`, `api_user:website`). */
  target: string;
  /** Field names and the values written (for an update, the fields sent). */
  changes?: Record<string, unknown>;
  /** For an update: the same fields' values before it (a field missing here had none to show, e.g. a key). */
  before?: Record<string, unknown>;
}

/** Changes made by someone without a better name: the first-start user, tests. */
export const OPERATOR: AuditSource = { actor: "operator" };

/** The operator at the command line, by the name of the OS account running it. */
export function cliSource(): AuditSource {
  let name: string | undefined;
  try {
    name = os.userInfo().username;
  } catch {
    // A container user without a passwd entry.
    name = process.env.USER;
  }
  return { actor: `cli:${name || "unknown"}` };
}

/**
 * Writes one audit entry through `client`: pass the transaction of the change
 * it records. Values that are not JSON (dates) are stored as JSON writes them.
 */
export async function recordAudit(client: DbClient, entry: AuditEntry & AuditSource): Promise<void> {
  const changes = JSON.stringify(entry.changes ?? {});
  const before = entry.before === undefined ? null : JSON.stringify(entry.before);
  await client.$executeRaw`
    INSERT INTO audit_log (actor, action, target, changes, before, "requestId", "clientAddress")
    VALUES (${entry.actor}, ${entry.action}, ${entry.target}, ${changes}::jsonb, ${before}::jsonb, ${entry.requestId ?? null}, ${entry.clientAddress ?? null})`;
}

/** The audit entry of a write made in SQL: its target and changes as expressions over the written row `w`. */
export interface AuditedRowEntry {
  action: AuditAction;
  /** e.g. Prisma.sql`'world:' || w.id` */
  target: Prisma.Sql;
  /** A jsonb expression, e.g. Prisma.sql`${JSON.stringify(fields)}::jsonb`. */
  changes: Prisma.Sql;
  /** The webhook event each written row announces (src/webhooks), recorded in the same statement. */
  event?: RowEvent;
}

/** The audit entry of a RowUpdate: its changes, and the values they replaced, are the update's `after` and `before`. */
export type AuditedUpdateEntry = Omit<AuditedRowEntry, "changes">;

/** Runs a write and its audit entry as one statement (auditedWrite, with the request's source). */
export interface AuditedWrite {
  <T>(write: Prisma.Sql, entry: AuditedRowEntry): Promise<T[]>;
  <T>(write: RowUpdate, entry: AuditedUpdateEntry): Promise<T[]>;
}

/**
 * A write and its audit entry in one statement: `write` is an INSERT or UPDATE
 * ending in `RETURNING *`, or a RowUpdate (whose entry records the values the
 * update replaced, read in the same statement), and each row it returns gets
 * its entry. PostgreSQL runs a statement whole or not at all, so this is
 * atomic without a transaction — a quarter of the cost of BEGIN, write,
 * audit, COMMIT through Prisma (bench/README.md). Inside a transaction it
 * simply joins it.
 */
export function auditedWrite<T>(
  client: Pick<DbClient, "$queryRaw">,
  write: Prisma.Sql | RowUpdate,
  entry: AuditedUpdateEntry & { changes?: Prisma.Sql },
  source: AuditSource,
): Promise<T[]> {
  const update = write instanceof RowUpdate ? write : undefined;
  const changes = update?.after ?? entry.changes;
  if (!changes) throw new Error(`${entry.action}: an audited write that is no RowUpdate names its changes`);
  return client.$queryRaw<T[]>(Prisma.sql`
    WITH ${update ? Prisma.sql`old AS (${update.old}),` : Prisma.empty}
         w AS (${update ? update.update : write}),
         a AS (INSERT INTO audit_log (actor, action, target, changes, before, "requestId", "clientAddress")
               SELECT ${source.actor}, ${entry.action}, ${entry.target}, ${changes}, ${update ? update.before : Prisma.sql`NULL::jsonb`},
                      ${source.requestId ?? null}, ${source.clientAddress ?? null}
                 FROM w${update ? Prisma.sql` CROSS JOIN old` : Prisma.empty})${entry.event ? eventCtes(entry.event) : Prisma.empty}
    SELECT * FROM w`);
}

export interface AuditRecord {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target: string;
  changes: Record<string, unknown>;
  before: Record<string, unknown> | null;
  requestId: string | null;
  clientAddress: string | null;
}

export interface AuditQuery {
  since?: Date;
  /** The actor, compared regardless of case. */
  user?: string;
  limit: number;
}

/** The newest entries first (by id among entries of the same moment; a bare `id` would be the text alias), filtered; `limit` of them at most. */
export async function readAudit(client: DbClient, query: AuditQuery): Promise<AuditRecord[]> {
  const rows = await client.$queryRaw<(Omit<AuditRecord, "changes" | "before"> & { changes: string; before: string | null })[]>`
    SELECT id::text AS id, at, actor::text AS actor, action, target, changes::text AS changes, before::text AS before, "requestId", "clientAddress"
      FROM audit_log
     WHERE (${query.since ?? null}::timestamptz IS NULL OR at >= ${query.since ?? null}::timestamptz)
       AND (${query.user ?? null}::text IS NULL OR actor = ${query.user ?? null}::citext)
     ORDER BY at DESC, audit_log.id DESC
     LIMIT ${query.limit}`;
  return rows.map((r) => ({
    ...r,
    changes: JSON.parse(r.changes) as Record<string, unknown>,
    before: r.before === null ? null : (JSON.parse(r.before) as Record<string, unknown>),
  }));
}
