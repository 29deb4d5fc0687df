import type { DbClient } from "../db/client.js";
import { formAnswer } from "../entities/form.js";
import { infectedStats, STATISTICS } from "../entities/infected.js";
import { player } from "../entities/player.js";
import { rewardLog } from "../entities/reward-log.js";
import { world } from "../entities/world.js";
import { timestampSql } from "../fields/timestamp.js";
import { Prisma } from "../generated/prisma/client.js";
import { eventNamesPlayer, type PlayerSelector } from "./erasure.js";

/** Every row that names one player, as the API answers each, read in one statement (one snapshot). */
export interface PlayerRows {
  player: Record<string, unknown>;
  infectedStats: Record<string, unknown> | null;
  leaderboards: Record<string, unknown>[];
  formAnswers: Record<string, unknown>[];
  rewardLogs: Record<string, unknown>[];
  worlds: Record<string, unknown>[];
  auditEntries: Record<string, unknown>[];
  events: Record<string, unknown>[];
}

/** The player is being erased (a transaction holds their row to delete it): their export would be of rows going. */
export const BEING_ERASED = "being erased";

/** A leaderboard period as an export shows it, and what the player gained in it (leaderboard_entries). */
const GAINS = Prisma.raw(
  `json_build_object('kind', lp.kind, 'key', lp.key, 'startsAt', ${timestampSql(`lp."startsAt"`)}, 'endsAt', ${timestampSql(`lp."endsAt"`)}) AS period, ${STATISTICS.map((s) => `e."${s}"`).join(", ")}`,
);

const rows = (sql: Prisma.Sql, order = Prisma.sql`x.id`) => Prisma.sql`(SELECT coalesce(json_agg(x ORDER BY ${order}), '[]'::json) FROM (${sql}) x)`;

/**
 * The player's rows: their record, statistics and leaderboard gains, form answers, reward logs and worlds; the audit entries of
 * those records (and of the player), and the events of the outbox whose data names them. Undefined: no such player.
 */
export async function readPlayerRows(db: DbClient, selector: PlayerSelector): Promise<PlayerRows | typeof BEING_ERASED | undefined> {
  const which = "id" in selector ? Prisma.sql`id = ${selector.id}` : Prisma.sql`pseudo = ${selector.pseudo}::citext`;
  const [found] = await db.$queryRaw<(PlayerRows & { found: boolean; seen: boolean })[]>`
    WITH seen AS (SELECT id FROM players WHERE ${which}),
         -- Held until the export's transaction ends: an erasure waits for it; one under way holds it (skipped).
         p AS (SELECT id FROM players WHERE ${which} FOR KEY SHARE SKIP LOCKED),
         targets AS (
           SELECT 'player:' || id AS target FROM p
           UNION ALL SELECT 'form_answer:' || f.id FROM form_answers f, p WHERE f."playerId" = p.id
           UNION ALL SELECT 'reward_log:' || r.id FROM reward_logs r, p WHERE r."playerId" = p.id
           UNION ALL SELECT 'world:' || w.id FROM worlds w, p WHERE w."ownerId" = p.id)
    SELECT EXISTS (SELECT 1 FROM p) AS found, EXISTS (SELECT 1 FROM seen) AS seen,
      (SELECT row_to_json(x) FROM (SELECT ${player.full.columns} FROM players WHERE id = (SELECT id FROM p)) x) AS player,
      (SELECT row_to_json(x) FROM (SELECT ${infectedStats.full.columns} FROM infected_stats WHERE "playerId" = (SELECT id FROM p)) x) AS "infectedStats",
      ${rows(
        Prisma.sql`SELECT ${GAINS} FROM leaderboard_entries e JOIN leaderboard_periods lp ON lp.id = e."periodId" WHERE e."playerId" = (SELECT id FROM p)`,
        Prisma.sql`x.period->>'startsAt', x.period->>'kind', x.period->>'key'`,
      )} AS leaderboards,
      ${rows(Prisma.sql`SELECT ${formAnswer.full.columns} FROM form_answers WHERE "playerId" = (SELECT id FROM p)`)} AS "formAnswers",
      ${rows(Prisma.sql`SELECT ${rewardLog.full.columns} FROM reward_logs WHERE "playerId" = (SELECT id FROM p)`)} AS "rewardLogs",
      ${rows(Prisma.sql`SELECT ${world.full.columns} FROM worlds WHERE "ownerId" = (SELECT id FROM p)`)} AS worlds,
      ${rows(
        Prisma.sql`
        SELECT a.id::text AS id, ${Prisma.raw(timestampSql("a.at"))} AS at, a.actor::text AS actor, a.action, a.target, a.changes, a.before,
               a."requestId", a."clientAddress"
          FROM audit_log a WHERE a.target IN (SELECT target FROM targets)`,
        Prisma.sql`x.id::bigint`,
      )} AS "auditEntries",
      ${rows(Prisma.sql`
        SELECT e.id, e."messageId", e.type, to_char(e."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp, e.data::jsonb AS data
          FROM webhook_events e, p WHERE ${eventNamesPlayer(Prisma.sql`p.id`)}`)} AS events`;
  if (!found?.found) return found?.seen ? BEING_ERASED : undefined;
  // Ordered by the outbox's id; shown without it (it means nothing outside this database).
  const events = found.events.map((event) => Object.fromEntries(Object.entries(event).filter(([name]) => name !== "id")));
  return {
    player: found.player,
    infectedStats: found.infectedStats,
    leaderboards: found.leaderboards,
    formAnswers: found.formAnswers,
    rewardLogs: found.rewardLogs,
    worlds: found.worlds,
    auditEntries: found.auditEntries,
    events,
  };
}

/** The export's format: a document a person can read (the API's field names) and a machine can parse. */
export const PLAYER_EXPORT_FORMAT = "community-player-export";
export const PLAYER_EXPORT_VERSION = 1;

/** What each part of an export holds: its manifest says it, in the document itself. */
export const PLAYER_EXPORT_PARTS = {
  player: "The player's record, every field (PlayerFull): pseudo, token, address, chat account, connection history, time played",
  infectedStats: "Their Infected statistics (InfectedStats), or null",
  leaderboards:
    "What they gained in each leaderboard period that counted them (a day, week, month or season: its kind, key, start and end), per statistic; derived from their statistics",
  formAnswers: "Their form answers (FormAnswer): free-text answers and video links",
  rewardLogs: "The rewards recorded for them (RewardLog)",
  worlds: "The Freebuild worlds they own (World)",
  auditEntries: "The audit log's entries of those records and of the player (AuditEntry): who changed what, when, the values written",
  events: "The events of the outbox whose data names them (the webhook body: type, timestamp, data), as webhooks delivered them",
} as const;

/** The rows per part of an export. */
export function exportCounts(found: PlayerRows): Record<keyof typeof PLAYER_EXPORT_PARTS, number> {
  return {
    player: 1,
    infectedStats: found.infectedStats ? 1 : 0,
    leaderboards: found.leaderboards.length,
    formAnswers: found.formAnswers.length,
    rewardLogs: found.rewardLogs.length,
    worlds: found.worlds.length,
    auditEntries: found.auditEntries.length,
    events: found.events.length,
  };
}

/** The document: its manifest (what, when, by whom, the counts), then the parts. */
export function exportDocument(found: PlayerRows, madeBy: string, madeAt: Date) {
  return {
    manifest: {
      format: PLAYER_EXPORT_FORMAT,
      version: PLAYER_EXPORT_VERSION,
      madeAt: madeAt.toISOString(),
      madeBy,
      player: { id: found.player.id as number, pseudo: found.player.pseudo as string },
      parts: PLAYER_EXPORT_PARTS,
      counts: exportCounts(found),
    },
    ...found,
  };
}
