import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { jsonList } from "../../db/json-list.js";

/** The whole list as JSON text built by PostgreSQL, columns in the shape's order. */
export function allInfectedStatsJson(prisma: PrismaClient): Promise<string> {
  return jsonList(
    prisma,
    Prisma.sql`SELECT "playerId", kill, assist, death, game, "eligibleGame", "winZ", "winH", playtime, coin, point, objectif, "newPlayer"
                 FROM infected_stats`,
    'r."playerId"',
  );
}
