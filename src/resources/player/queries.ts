import type { PrismaClient } from "../../generated/prisma/client.js";
import type { PLAYER_SUMMARY_SELECT } from "./shape.js";
import type { Player } from "../../generated/prisma/client.js";

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

/**
 * Full lists built as JSON text by PostgreSQL: Node passes one string through
 * instead of mapping and serialising thousands of rows. row_to_json writes the
 * same bytes as JSON.stringify for these columns (a test compares them), in
 * the column order of the select, which is the shape's order.
 */
const TIMESTAMP = `'YYYY-MM-DD"T"HH24:MI:SS"Z"'`;

export async function allPlayersJson(prisma: PrismaClient): Promise<string> {
  const [row] = await prisma.$queryRaw<{ json: string }[]>`
    SELECT coalesce('[' || string_agg(row_to_json(p)::text, ',' ORDER BY p.id) || ']', '[]') AS json
      FROM (SELECT id, pseudo::text AS pseudo, credit, "gradeId", "modStatus", staff, alert, nickname::text AS nickname, status,
                   "chatId", language, "streamerPoint", tag, color, highclub, vote
              FROM players) p`;
  return row!.json;
}

export async function playersByGradeJson(prisma: PrismaClient, gradeId: number): Promise<string> {
  const [row] = await prisma.$queryRawUnsafe<{ json: string }[]>(
    `SELECT coalesce('[' || string_agg(row_to_json(p)::text, ',' ORDER BY p.id) || ']', '[]') AS json
       FROM (SELECT id, pseudo::text AS pseudo, token, credit, "gradeId", "modStatus", staff, alert, nickname::text AS nickname,
                    to_char("firstConnection" AT TIME ZONE 'UTC', ${TIMESTAMP}) AS "firstConnection", "totalTimeConnection",
                    status, ip, "chatId", language, "streamerPoint", tag, color, highclub, vote
               FROM players WHERE "gradeId" = $1) p`,
    gradeId,
  );
  return row!.json;
}
