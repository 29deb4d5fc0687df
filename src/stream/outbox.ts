import { AddressAllowList } from "../auth/address-allow-list.js";
import type { Database } from "../db/database.js";
import { EVENT_TYPES } from "../events/catalogue.js";
import { Prisma } from "../generated/prisma/client.js";
import { messageBody } from "../webhooks/attempt.js";
import type { EventIds, EventKey } from "./event-id.js";

/**
 * The event stream's reads of the outbox (webhook_events), in its order:
 * ("writtenBy", id), and only the events whose transaction is below the xmin
 * of the read's snapshot. Every transaction below it has ended and every
 * later one gets a higher id, so no event can ever appear before a position
 * once read: the sequence is the same from every instance.
 */

/** Events read at once, by the tail and by a stream catching up. */
export const PAGE = 500;

/** An event as streams send it: its place in the stream, its topic (stream/topics.ts), and its SSE frame. */
export interface StreamEvent {
  key: EventKey;
  topic: string;
  frame: string;
  /** The write's trace, when it was traced: the fan-out's span links to it (batch.ts). */
  traceparent: string | null;
}

/** How the rows read become events: their ids (sealed under the database's key) and topics. */
export interface EventFraming {
  ids: EventIds;
  topicOf(type: string, data: string, createdAt: Date): string;
}

interface OutboxRow {
  xid: string;
  id: string;
  type: string;
  data: string;
  createdAt: Date;
  traceparent: string | null;
}

const XMIN = Prisma.sql`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;
/** Over the table as `e`: the ORDER BYs name its columns, not the text columns of the same names they select. */
const after = (key: EventKey) => Prisma.sql`(e."writtenBy", e.id) > (${key.xid}::bigint, ${key.id}::bigint)`;
const upToKey = (key: EventKey) => Prisma.sql`(e."writtenBy", e.id) <= (${key.xid}::bigint, ${key.id}::bigint)`;
const COLUMNS = Prisma.sql`e."writtenBy"::text AS xid, e.id::text AS id, e.type, e.data, e."createdAt", e.traceparent`;
const toKey = (row: { xid: string; id: string }): EventKey => ({ xid: BigInt(row.xid), id: BigInt(row.id) });

function toStreamEvent(row: OutboxRow, framing: EventFraming): StreamEvent {
  // The webhook body, byte for byte (webhooks/attempt.ts).
  const body = messageBody({ messageId: "", type: row.type, data: row.data, createdAt: row.createdAt });
  const key = toKey(row);
  // The write's trace (tracing on), as a field EventSource and the clients ignore unless they look for it.
  const trace = row.traceparent ? `traceparent: ${row.traceparent}\n` : "";
  const frame = `id: ${framing.ids.event(key)}\nevent: ${row.type}\n${trace}data: ${body}\n\n`;
  return { key, topic: framing.topicOf(row.type, row.data, row.createdAt), frame, traceparent: row.traceparent };
}

/** The database's sync key (migration 20261125100000_sync_identity), which seals event ids as it seals sync tokens. */
export async function syncKey(db: Database): Promise<Buffer> {
  const [row] = await db.prisma.$queryRaw<{ key: string | null }[]>`SELECT sync_key() AS key`;
  if (!row?.key) throw new Error("sync_identity holds no row: the database's sync key is missing (re-run the migrations)");
  return Buffer.from(row.key, "hex");
}

/**
 * Events written by transactions of another server (a restore of pg_dump
 * into another cluster, or of a backup): their "writtenBy" is at or past
 * anything this server's transactions have reached, so that every new event
 * would sort before them and never be read. They are put before every event
 * of this server, in the order of their ids. A row this server wrote cannot
 * match: visible to the statement, its transaction ended before the
 * statement's snapshot, below its xmax. How many were moved.
 */
export async function adoptForeignEvents(db: Database): Promise<number> {
  return db.prisma.$executeRaw`
    UPDATE webhook_events SET "writtenBy" = 1 WHERE "writtenBy" >= pg_snapshot_xmax(pg_current_snapshot())::text::bigint`;
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
export async function nextEvents(db: Database, framing: EventFraming, from: EventKey): Promise<{ events: StreamEvent[]; held: boolean }> {
  const rows = await db.prisma.$queryRaw<(OutboxRow & { held: boolean })[]>`
    WITH s AS (SELECT ${XMIN} AS xmin)
    SELECT e.xid, e.id, e.type, e.data, e."createdAt", e.traceparent,
           EXISTS (SELECT 1 FROM webhook_events h WHERE h."writtenBy" >= s.xmin) AS held
      FROM s LEFT JOIN LATERAL (
        SELECT ${COLUMNS} FROM webhook_events e WHERE ${after(from)} AND e."writtenBy" < s.xmin
         ORDER BY e."writtenBy", e.id LIMIT ${PAGE}) e ON TRUE`;
  return { events: rows.filter((r) => r.xid !== null).map((r) => toStreamEvent(r, framing)), held: rows[0]?.held ?? false };
}

/**
 * The events after `from`, up to `upTo` (a position already read, so final), of the given types: a
 * stream catching up; and where the next read starts (`upTo` once none is left). Bounded work whatever
 * the types: of every type, PAGE events at most, each type read on the index of its own
 * (webhook_events_type_idx), merged; all types at once on the stream's order.
 */
export async function eventsBetween(
  db: Database,
  framing: EventFraming,
  from: EventKey,
  upTo: EventKey,
  types: readonly string[],
): Promise<{ events: StreamEvent[]; next: EventKey }> {
  const range = Prisma.sql`${after(from)} AND ${upToKey(upTo)}`;
  const rows =
    types.length >= EVENT_TYPES.length
      ? await db.prisma.$queryRaw<OutboxRow[]>`
          SELECT ${COLUMNS} FROM webhook_events e WHERE ${range} ORDER BY e."writtenBy", e.id LIMIT ${PAGE}`
      : await db.prisma.$queryRaw<OutboxRow[]>`
          SELECT e.* FROM (${Prisma.join(
            types.map(
              (type) => Prisma.sql`(SELECT ${COLUMNS} FROM webhook_events e WHERE e.type = ${type} AND ${range}
                                             ORDER BY e."writtenBy", e.id LIMIT ${PAGE})`,
            ),
            " UNION ALL ",
          )}) e ORDER BY e.xid::bigint, e.id::bigint LIMIT ${PAGE}`;
  const events = rows.map((r) => toStreamEvent(r, framing));
  return { events, next: events.length < PAGE ? upTo : events.at(-1)!.key };
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
