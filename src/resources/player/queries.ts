import { jsonList } from "../../db/json-list.js";
import type { ReadClient } from "../../db/client.js";
import { Prisma } from "../../generated/prisma/client.js";
import { player, playerSummary } from "./entity.js";

type PlayerSummary = ReturnType<typeof playerSummary.toJson>;

/**
 * Hot path (a plugin looks a player up when they join): raw SQL through
 * Prisma, which the benchmark measured well ahead of findMany here. pseudo
 * and nickname are citext, so `=` ignores case and uses their unique indexes.
 * At most two rows: the pseudo match and the nickname match, each already in
 * the answer's shape.
 */
export function playersByNick(prisma: ReadClient, nick: string): Promise<PlayerSummary[]> {
  return prisma.$queryRaw<PlayerSummary[]>`
    SELECT ${playerSummary.columns} FROM players WHERE pseudo = ${nick}::citext OR nickname = ${nick}::citext LIMIT 2`;
}

const ALL_PLAYERS = Prisma.sql`SELECT ${playerSummary.columns} FROM players`;

/** Full lists as JSON text built by PostgreSQL. */
export function allPlayersJson(prisma: ReadClient): Promise<string> {
  return jsonList(prisma, ALL_PLAYERS, "r.id");
}

export function playersByGradeJson(prisma: ReadClient, gradeId: number): Promise<string> {
  return jsonList(prisma, Prisma.sql`SELECT ${player.full.columns} FROM players WHERE "gradeId" = ${gradeId}`, "r.id");
}
