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
