import type { DbClient } from "../db/client.js";
import { currentTraceparent } from "../core/tracing.js";
import { Prisma } from "../generated/prisma/client.js";

/**
 * The events announced to webhook endpoints. The API's writes announce the
 * first six; an import announces each record it writes as `<kind>.created`
 * or `<kind>.updated`. Every event carries the resource as the API answers it
 * (`api_user.created`: the username and role, never the key).
 */
export const IMPORT_KINDS = {
  players: "player",
  cosmetics: "cosmetic",
  formAnswers: "form",
  infectedStats: "infected_stats",
  temporaryItems: "temporary_item",
  rewardLogs: "reward_log",
  worlds: "world",
  parkourMaps: "parkour_map",
} as const;

export const WEBHOOK_EVENTS: readonly string[] = [
  ...new Set([
    "reward_log.created",
    "form.created",
    "cosmetic.updated",
    "world.updated",
    "api_user.created",
    // A player erased (docs/PRIVACY.md): their id and the receipt's, nothing else of theirs.
    "player.erased",
    // Leaderboards (src/leaderboards/periods.ts): a period begun (with the last one's final top), a season ended.
    "leaderboard.period_started",
    "season.ended",
    ...Object.values(IMPORT_KINDS).flatMap((kind) => [`${kind}.created`, `${kind}.updated`]),
  ]),
];

/** The channel on which new deliveries are announced (a trigger of webhook_deliveries, at commit). */
export const DELIVERIES_CHANNEL = "webhook_deliveries";

/** The event of a write made in SQL: its type, and the answer's SELECT list (entity.full.columns) over the written row. */
export interface RowEvent {
  /** A type, or an SQL expression over the written row `w` choosing one. */
  type: string | Prisma.Sql;
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
export async function recordEvent(client: DbClient, type: string, data: Record<string, unknown>, onlyIf?: Prisma.Sql): Promise<boolean> {
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
