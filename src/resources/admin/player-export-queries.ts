import type { DbClient } from "../../db/client.js";
import { formAnswer } from "../../entities/form.js";
import { infectedStats } from "../../entities/infected.js";
import { player } from "../../entities/player.js";
import { rewardLog } from "../../entities/reward-log.js";
import { world } from "../../entities/world.js";
import { timestampSql } from "../../fields/timestamp.js";
import { Prisma } from "../../generated/prisma/client.js";

/** Which player: by id, or by pseudo (regardless of case). */
export type PlayerSelector = { id: number } | { pseudo: string };

/** Every row that names one player, as the API answers each, read in one statement (one snapshot). */
export interface PlayerRows {
  player: Record<string, unknown>;
  infectedStats: Record<string, unknown> | null;
  formAnswers: Record<string, unknown>[];
  rewardLogs: Record<string, unknown>[];
  worlds: Record<string, unknown>[];
  auditEntries: Record<string, unknown>[];
  events: Record<string, unknown>[];
}

/** The event types whose data names a player, and the field that does. */
const EVENT_FIELDS: Record<string, string> = { player: "id", infected_stats: "playerId", form: "playerId", reward_log: "playerId", world: "ownerId" };

const rows = (sql: Prisma.Sql, order = Prisma.sql`x.id`) => Prisma.sql`(SELECT coalesce(json_agg(x ORDER BY ${order}), '[]'::json) FROM (${sql}) x)`;

/**
 * The player's rows: their record, statistics, form answers, reward logs and worlds; the audit entries of
 * those records (and of the player), and the events of the outbox whose data names them. Undefined: no such player.
 */
export async function readPlayerRows(db: DbClient, selector: PlayerSelector): Promise<PlayerRows | undefined> {
  const which = "id" in selector ? Prisma.sql`id = ${selector.id}` : Prisma.sql`pseudo = ${selector.pseudo}::citext`;
  const eventOf = Object.entries(EVENT_FIELDS).map(
    ([kind, field]) => Prisma.sql`(e.type LIKE ${`${kind}.%`} AND (e.data::jsonb ->> ${field}) = p.id::text)`,
  );
  const [found] = await db.$queryRaw<(PlayerRows & { found: boolean })[]>`
    WITH p AS (SELECT id FROM players WHERE ${which}),
         targets AS (
           SELECT 'player:' || id AS target FROM p
           UNION ALL SELECT 'form_answer:' || f.id FROM form_answers f, p WHERE f."playerId" = p.id
           UNION ALL SELECT 'reward_log:' || r.id FROM reward_logs r, p WHERE r."playerId" = p.id
           UNION ALL SELECT 'world:' || w.id FROM worlds w, p WHERE w."ownerId" = p.id)
    SELECT EXISTS (SELECT 1 FROM p) AS found,
      (SELECT row_to_json(x) FROM (SELECT ${player.full.columns} FROM players WHERE id = (SELECT id FROM p)) x) AS player,
      (SELECT row_to_json(x) FROM (SELECT ${infectedStats.full.columns} FROM infected_stats WHERE "playerId" = (SELECT id FROM p)) x) AS "infectedStats",
      ${rows(Prisma.sql`SELECT ${formAnswer.full.columns} FROM form_answers WHERE "playerId" = (SELECT id FROM p)`)} AS "formAnswers",
      ${rows(Prisma.sql`SELECT ${rewardLog.full.columns} FROM reward_logs WHERE "playerId" = (SELECT id FROM p)`)} AS "rewardLogs",
      ${rows(Prisma.sql`SELECT ${world.full.columns} FROM worlds WHERE "ownerId" = (SELECT id FROM p)`)} AS worlds,
      ${rows(Prisma.sql`
        SELECT a.id::text AS id, ${Prisma.raw(timestampSql("a.at"))} AS at, a.actor::text AS actor, a.action, a.target, a.changes, a.before,
               a."requestId", a."clientAddress"
          FROM audit_log a WHERE a.target IN (SELECT target FROM targets)`, Prisma.sql`x.id::bigint`)} AS "auditEntries",
      ${rows(Prisma.sql`
        SELECT e.id, e."messageId", e.type, to_char(e."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp, e.data::jsonb AS data
          FROM webhook_events e, p WHERE ${Prisma.join(eventOf, " OR ")}`)} AS events`;
  if (!found?.found) return undefined;
  // Ordered by the outbox's id; shown without it (it means nothing outside this database).
  const events = found.events.map((event) => Object.fromEntries(Object.entries(event).filter(([name]) => name !== "id")));
  return { player: found.player, infectedStats: found.infectedStats, formAnswers: found.formAnswers, rewardLogs: found.rewardLogs, worlds: found.worlds, auditEntries: found.auditEntries, events };
}
