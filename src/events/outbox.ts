import { AddressAllowList } from "../auth/address-allow-list.js";
import type { Database } from "../db/database.js";
import { Prisma } from "../generated/prisma/client.js";
import { messageBody } from "../webhooks/attempt.js";
import { compareKeys, encodeEventId, ZERO_KEY, type EventKey } from "./event-id.js";

/**
 * The event stream's reads of the outbox (webhook_events), in its order:
 * ("writtenBy", id), and only the events whose transaction is below the xmin
 * of the read's snapshot. Every transaction below it has ended and every
 * later one gets a higher id, so no event can ever appear before a position
 * once read: the sequence is the same from every instance.
 */

/** Events read at once, by the tail and by a stream catching up. */
export const PAGE = 500;

/** An event as streams send it: its place in the stream, its type, and its SSE frame. */
export interface StreamEvent {
  key: EventKey;
  type: string;
  frame: string;
}

interface OutboxRow {
  xid: string;
  id: string;
  type: string;
  data: string;
  createdAt: Date;
}

const XMIN = Prisma.sql`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;
/** Over the table as `e`: the ORDER BYs name its columns, not the text columns of the same names they select. */
const after = (key: EventKey) => Prisma.sql`(e."writtenBy", e.id) > (${key.xid}::bigint, ${key.id}::bigint)`;
const toKey = (row: { xid: string; id: string }): EventKey => ({ xid: BigInt(row.xid), id: BigInt(row.id) });

function toStreamEvent(row: OutboxRow): StreamEvent {
  // The webhook body, byte for byte (webhooks/attempt.ts).
  const body = messageBody({ messageId: "", type: row.type, data: row.data, createdAt: row.createdAt });
  const key = toKey(row);
  return { key, type: row.type, frame: `id: ${encodeEventId(key)}\nevent: ${row.type}\ndata: ${body}\n\n` };
}

/** The last event readable now (after `from`), without its data; undefined when none. */
export async function lastEvent(db: Database, from?: EventKey): Promise<EventKey | undefined> {
  const [row] = await db.prisma.$queryRaw<{ xid: string; id: string }[]>`
    SELECT e."writtenBy"::text AS xid, e.id::text AS id FROM webhook_events e
     WHERE e."writtenBy" < ${XMIN} ${from ? Prisma.sql`AND ${after(from)}` : Prisma.empty}
     ORDER BY e."writtenBy" DESC, e.id DESC LIMIT 1`;
  return row ? toKey(row) : undefined;
}

/**
 * The next events after `from` (a page); `held`: whether committed events
 * wait behind a transaction still running (read again soon).
 */
export async function nextEvents(db: Database, from: EventKey): Promise<{ events: StreamEvent[]; held: boolean }> {
  const rows = await db.prisma.$queryRaw<(OutboxRow & { held: boolean })[]>`
    WITH s AS (SELECT ${XMIN} AS xmin)
    SELECT e."writtenBy"::text AS xid, e.id::text AS id, e.type, e.data, e."createdAt",
           EXISTS (SELECT 1 FROM webhook_events h WHERE h."writtenBy" >= s.xmin) AS held
      FROM s LEFT JOIN LATERAL (
        SELECT * FROM webhook_events e WHERE ${after(from)} AND e."writtenBy" < s.xmin
         ORDER BY e."writtenBy", e.id LIMIT ${PAGE}) e ON TRUE`;
  return { events: rows.filter((r) => r.xid !== null).map(toStreamEvent), held: rows[0]?.held ?? false };
}

/** The events after `from`, up to `upTo` (a position already read, so final), of the given types: a stream catching up. */
export async function eventsBetween(db: Database, from: EventKey, upTo: EventKey, types: ReadonlySet<string>): Promise<StreamEvent[]> {
  const rows = await db.prisma.$queryRaw<OutboxRow[]>`
    SELECT e."writtenBy"::text AS xid, e.id::text AS id, e.type, e.data, e."createdAt"
      FROM webhook_events e
     WHERE ${after(from)} AND (e."writtenBy", e.id) <= (${upTo.xid}::bigint, ${upTo.id}::bigint)
       AND e.type IN (${Prisma.join([...types])})
     ORDER BY e."writtenBy", e.id
     LIMIT ${PAGE}`;
  return rows.map(toStreamEvent);
}

/** A resume point is answered 410 once within this much of the retention's end: the hourly pruning may take it any moment. */
const RETENTION_MARGIN_MS = 3_600_000;

/**
 * Whether every event after `after` is still in the outbox, kept `retainDays`
 * (WEBHOOKS_RETAIN_DAYS). The outbox is pruned from its start
 * (webhooks/worker.ts): while this event is in it, so is every later one. The
 * position of a stream opened on an empty outbox is resumable while no event
 * of then can have been pruned.
 */
export async function resumable(db: Database, after: EventKey, retainDays: number): Promise<boolean> {
  const oldestKept = Date.now() - retainDays * 86_400_000 + RETENTION_MARGIN_MS;
  const first = compareKeys(after, ZERO_KEY) === 0;
  const [row] = first
      ? await db.prisma.$queryRaw<{ createdAt: Date }[]>`SELECT "createdAt" FROM webhook_events ORDER BY "writtenBy", id LIMIT 1`
      : await db.prisma.$queryRaw<{ createdAt: Date }[]>`
          SELECT "createdAt" FROM webhook_events WHERE "writtenBy" = ${after.xid}::bigint AND id = ${after.id}::bigint`;
  const at = row?.createdAt ?? (first ? new Date() : undefined);
  return at !== undefined && at.getTime() >= oldestKept;
}

/** Whether a key still authenticates, until when (a rotated key's grace period), and from where; as users.ts's authenticate decides. */
export interface KeyState {
  valid: boolean;
  until?: number;
  /** The addresses the key may be used from; undefined: anywhere. */
  addresses?: AddressAllowList;
}

export async function keyState(db: Database, keyHash: string): Promise<KeyState> {
  const [row] = await db.prisma.$queryRaw<{ current: boolean; expires: Date | null; allowedIps: string | null }[]>`
    SELECT "keyHash" = ${keyHash} AS current, "previousKeyExpiresAt" AS expires, "allowedIps" FROM api_users
     WHERE "revokedAt" IS NULL AND ("keyHash" = ${keyHash} OR ("previousKeyHash" = ${keyHash} AND "previousKeyExpiresAt" > now()))`;
  if (!row) return { valid: false };
  const addresses = row.allowedIps === null ? undefined : (AddressAllowList.parse(row.allowedIps).list ?? AddressAllowList.nowhere());
  return { valid: true, until: row.current ? undefined : row.expires!.getTime(), addresses };
}
