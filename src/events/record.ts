/**
 * The outbox rows a write records, in its own transaction: the event (webhook_events), and a delivery
 * for each endpoint subscribed to it. Webhooks (webhooks/) deliver them; the event stream (stream/)
 * reads them too. The types are catalogue.ts's.
 */

import { currentTraceparent } from "../core/tracing.js";
import type { DbClient } from "../db/client.js";
import { Prisma } from "../generated/prisma/client.js";
import type { EventType } from "./catalogue.js";

/** The channel on which new deliveries are announced (a trigger of webhook_deliveries, at commit). */
export const DELIVERIES_CHANNEL = "webhook_deliveries";

/** The event of a write made in SQL: its type, and the answer's SELECT list (entity.full.columns) over the written row. */
export interface RowEvent {
  /** A type, or an SQL expression over the written row `w` choosing one (an import's `.created` or `.updated`). */
  type: EventType | Prisma.Sql;
  columns: Prisma.Sql;
}

/** The traceparent column and value of an event written now: the active span's, when tracing is on (core/tracing.ts). */
function traced(): { column: Prisma.Sql; value: Prisma.Sql } {
  const traceparent = currentTraceparent();
  return traceparent === null ? { column: Prisma.empty, value: Prisma.empty } : { column: Prisma.sql`, traceparent`, value: Prisma.sql`, ${traceparent}` };
}

/**
 * The CTEs that record the events of the rows of `w` (a preceding CTE of the
 * same statement holding the written rows), with a delivery for each endpoint
 * subscribed to them. Every event is recorded, subscribed or not: the event
 * stream (GET /api/events) reads the outbox too. To follow `WITH w AS (…)`.
 */
export function eventCtes(event: RowEvent): Prisma.Sql {
  const type = typeof event.type === "string" ? Prisma.sql`${event.type}::varchar` : event.type;
  const trace = traced();
  return Prisma.sql`,
    webhook_e AS (
      INSERT INTO webhook_events (type, data${trace.column})
      SELECT t.webhook_type, row_to_json(p)::text${trace.value}
        FROM w CROSS JOIN LATERAL (SELECT ${type} AS webhook_type) t CROSS JOIN LATERAL (SELECT ${event.columns}) p
      RETURNING id, type),
    webhook_d AS (
      INSERT INTO webhook_deliveries ("eventId", "endpointId")
      SELECT webhook_e.id, ep.id FROM webhook_e JOIN webhook_endpoints ep ON ep.events = '[]'::jsonb OR ep.events ? webhook_e.type)`;
}

/**
 * Records one event made in TypeScript (`data` as the API answers it) through
 * `client`: pass the transaction of the change it announces. With `onlyIf`, a
 * write returning a row when it happened (an UPDATE … RETURNING), the event
 * is recorded in the same statement, and only if that write returned a row.
 * Returns whether the event was recorded.
 */
export async function recordEvent(client: DbClient, type: EventType, data: Record<string, unknown>, onlyIf?: Prisma.Sql): Promise<boolean> {
  const trace = traced();
  const [row] = await client.$queryRaw<{ n: number }[]>`
    WITH ${onlyIf ? Prisma.sql`gate AS (${onlyIf}),` : Prisma.empty}
    webhook_e AS (
      INSERT INTO webhook_events (type, data${trace.column})
      SELECT ${type}, ${JSON.stringify(data)}${trace.value} ${onlyIf ? Prisma.sql`FROM gate` : Prisma.empty}
      RETURNING id, type),
    webhook_d AS (
      INSERT INTO webhook_deliveries ("eventId", "endpointId")
      SELECT webhook_e.id, ep.id FROM webhook_e JOIN webhook_endpoints ep ON ep.events = '[]'::jsonb OR ep.events ? webhook_e.type)
    SELECT count(*)::int AS n FROM webhook_e`;
  return (row?.n ?? 0) > 0;
}
