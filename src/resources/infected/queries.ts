import { jsonList } from "../../db/json-list.js";
import type { ReadClient } from "../../db/client.js";
import { Prisma } from "../../generated/prisma/client.js";
import { infectedStats } from "./entity.js";

const ALL_STATS = Prisma.sql`SELECT ${infectedStats.full.columns} FROM infected_stats`;

/** The whole list as JSON text built by PostgreSQL. */
export function allInfectedStatsJson(prisma: ReadClient): Promise<string> {
  return jsonList(prisma, ALL_STATS, 'r."playerId"');
}
