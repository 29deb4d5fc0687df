import type { ReadClient } from "../../db/client.js";
import { listOf } from "../../db/list-query.js";
import { player, playerSummary } from "../../entities/player.js";

type PlayerSummary = ReturnType<typeof playerSummary.toJson>;

/**
 * Hot path (a plugin looks a player up when they join): raw SQL through
 * Prisma, which the benchmark measured well ahead of findMany here. Both
 * names are citext, so `=` ignores case and uses their unique indexes; of the
 * two rows at most that match, the one matched by its first name comes first
 * (`pseudoOnly`: the pseudo alone, the join path's lookup). In the answer's shape.
 */
export async function playerByNick(prisma: ReadClient, nick: string, pseudoOnly = false): Promise<PlayerSummary | undefined> {
  const [found] = pseudoOnly
    ? await prisma.$queryRaw<PlayerSummary[]>`SELECT ${playerSummary.columns} FROM players WHERE pseudo = ${nick}::citext`
    : await prisma.$queryRaw<PlayerSummary[]>`
    SELECT ${playerSummary.columns} FROM players WHERE pseudo = ${nick}::citext OR nickname = ${nick}::citext ORDER BY pseudo = ${nick}::citext DESC LIMIT 1`;
  return found;
}

/** The lists: every player as a summary, and players in full (by grade). */
export const allPlayers = listOf(player, playerSummary);
export const fullPlayers = listOf(player, player.full);
