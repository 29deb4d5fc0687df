import { jsonList, utcText } from "../../db/json-list.js";
import { Prisma, type Player, type PrismaClient } from "../../generated/prisma/client.js";
import type { PLAYER_SUMMARY_SELECT } from "./shape.js";

type SummaryRow = Pick<Player, keyof typeof PLAYER_SUMMARY_SELECT>;

/**
 * Hot path (a plugin looks a player up when they join): raw SQL through
 * Prisma, which the benchmark measured well ahead of findMany here. pseudo
 * and nickname are citext, so `=` ignores case and uses their unique indexes.
 * At most two rows: the pseudo match and the nickname match.
 */
export function playersByNick(prisma: PrismaClient, nick: string): Promise<SummaryRow[]> {
  return prisma.$queryRaw<SummaryRow[]>`
    SELECT id, pseudo::text AS pseudo, credit, "gradeId", "modStatus", staff, alert, nickname::text AS nickname, status,
           "chatId", language, "streamerPoint", tag, color, highclub, vote
      FROM players
     WHERE pseudo = ${nick}::citext OR nickname = ${nick}::citext
     LIMIT 2`;
}

/** Full lists as JSON text built by PostgreSQL, columns in the order of shapes N and G. */
export function allPlayersJson(prisma: PrismaClient): Promise<string> {
  return jsonList(
    prisma,
    Prisma.sql`SELECT id, pseudo::text AS pseudo, credit, "gradeId", "modStatus", staff, alert, nickname::text AS nickname, status,
                      "chatId", language, "streamerPoint", tag, color, highclub, vote
                 FROM players`,
    "r.id",
  );
}

export function playersByGradeJson(prisma: PrismaClient, gradeId: number): Promise<string> {
  return jsonList(
    prisma,
    Prisma.sql`SELECT id, pseudo::text AS pseudo, token, credit, "gradeId", "modStatus", staff, alert, nickname::text AS nickname,
                      ${utcText("firstConnection")}, "totalTimeConnection", status, ip, "chatId", language, "streamerPoint",
                      tag, color, highclub, vote
                 FROM players WHERE "gradeId" = ${gradeId}`,
    "r.id",
  );
}
