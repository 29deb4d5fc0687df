import type { PrismaClient } from "../../generated/prisma/client.js";

/** The whole list as JSON text built by PostgreSQL (see player/queries.ts); columns in the shape's order. */
export async function allInfectedStatsJson(prisma: PrismaClient): Promise<string> {
  const [row] = await prisma.$queryRaw<{ json: string }[]>`
    SELECT coalesce('[' || string_agg(row_to_json(s)::text, ',' ORDER BY s."playerId") || ']', '[]') AS json
      FROM (SELECT "playerId", kill, assist, death, game, "eligibleGame", "winZ", "winH", playtime, coin, point, objectif, "newPlayer"
              FROM infected_stats) s`;
  return row!.json;
}
