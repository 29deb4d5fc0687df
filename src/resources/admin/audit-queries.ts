import type { ReadClient } from "../../db/client.js";
import { timestampSql } from "../../fields/timestamp.js";
import { Prisma } from "../../generated/prisma/client.js";

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  /** Inclusive. */
  from?: Date | undefined;
  /** Exclusive. */
  to?: Date | undefined;
}

export interface AuditPageRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  changes: string;
  before: string | null;
  requestId: string | null;
  clientAddress: string | null;
}

/**
 * A cursor names the last entry of a page (newest first, by id: entries
 * never change, so a page never repeats or skips one). Opaque to clients:
 * versioned base64url text, so its form may change.
 */
const CURSOR = /^a1:(\d{1,18})$/;
export const encodeCursor = (id: string) => Buffer.from(`a1:${id}`).toString("base64url");
export function decodeCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined;
  return CURSOR.exec(Buffer.from(cursor, "base64url").toString("latin1"))?.[1];
}

/** Up to `limit` entries after the cursor, newest first, times as the API writes them (UTC, whole seconds). */
export function readAuditPage(db: ReadClient, filter: AuditFilter, limit: number, after: string | undefined): Promise<AuditPageRow[]> {
  const where = [Prisma.sql`TRUE`];
  if (filter.actor !== undefined) where.push(Prisma.sql`actor = ${filter.actor}::citext`);
  if (filter.action !== undefined) where.push(Prisma.sql`action = ${filter.action}`);
  if (filter.from !== undefined) where.push(Prisma.sql`at >= ${filter.from}::timestamptz`);
  if (filter.to !== undefined) where.push(Prisma.sql`at < ${filter.to}::timestamptz`);
  if (after !== undefined) where.push(Prisma.sql`id < ${after}::bigint`);
  return db.$queryRaw<AuditPageRow[]>`
    SELECT id::text AS id, ${Prisma.raw(timestampSql("at"))} AS at, actor::text AS actor, action,
           target, changes::text AS changes, before::text AS before, "requestId", "clientAddress"
      FROM audit_log
     WHERE ${Prisma.join(where, " AND ")}
     ORDER BY audit_log.id DESC
     LIMIT ${limit}`;
}
