import { errors } from "../core/errors.js";
import type { Database } from "../db/database.js";
import { compareKeys, type EventIds, type EventKey, type SentEventId, type StreamStart, UNSEALED_EVENT_ID, ZERO_KEY } from "./event-id.js";

/**
 * Where a stream resumes: the key of the id the client sent, if this
 * database sent it and every event after it is still kept. Otherwise the
 * answer before the stream starts: 410 for an id of another database, of
 * this one before a restore, of the format before ids were sealed, or past
 * the retention (the client reloads by sync); 400 for one altered.
 */
export async function resumePoint(db: Database, ids: EventIds, sent: SentEventId, retainDays: number): Promise<EventKey> {
  if (UNSEALED_EVENT_ID.test(sent.id)) throw errors.eventIdExpired(sent.parameter, "an id of the format given before ids were sealed (2026-11-29)");
  const key = ids.decode(sent.id);
  if (key === "altered") throw errors.validation(`${sent.parameter}: not an id this stream sent; send the last one received unchanged`);
  if (key === "other-database") throw errors.eventIdExpired(sent.parameter, "not from this database (another one, or this one restored from a backup since)");
  if (!(await resumable(db, key, retainDays))) throw errors.eventIdExpired(sent.parameter, "its event is past the retention, or not in this database");
  return key;
}

/** Where a stream starts: after the event a client sent, or at a moment. */
export function startPoint(db: Database, ids: EventIds, start: StreamStart, retainDays: number): Promise<EventKey> {
  return "startAt" in start ? pointAt(db, start.startAt, retainDays) : resumePoint(db, ids, start, retainDays);
}

/**
 * The position just before the first event, in stream order, written at or after `since` (its createdAt, the
 * database's clock): every event from then on comes, and those after it in the stream written a moment before
 * (a transaction begun before `since` that committed after) too, rather than be missed. No event since: the
 * end of the outbox. 410 past the retention.
 */
async function pointAt(db: Database, since: Date, retainDays: number): Promise<EventKey> {
  if (since.getTime() < Date.now() - retainDays * 86_400_000 + RETENTION_MARGIN_MS) {
    throw errors.eventIdExpired(
      "startAt",
      `it is past the retention (${retainDays} days, WEBHOOKS_RETAIN_DAYS), its events may be pruned`,
      "start at this moment",
    );
  }
  const rows = await db.prisma.$queryRaw<{ xid: string; id: string }[]>`
    WITH first AS (SELECT "writtenBy", id FROM webhook_events WHERE "createdAt" >= ${since} ORDER BY "writtenBy", id LIMIT 1)
    SELECT "writtenBy"::text AS xid, id::text AS id FROM webhook_events
     WHERE NOT EXISTS (SELECT 1 FROM first) OR ("writtenBy", id) < (SELECT "writtenBy", id FROM first)
     ORDER BY "writtenBy" DESC, id DESC LIMIT 1`;
  return rows[0] ? { xid: BigInt(rows[0].xid), id: BigInt(rows[0].id) } : ZERO_KEY;
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
