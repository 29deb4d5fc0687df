import type { ReadClient } from "./client.js";

export type VersionedTable = "players" | "infected_stats" | "temporary_items" | "parkour_maps";

/**
 * The table's version (bumped by a trigger in every writing transaction), for
 * ETags: one primary-key read instead of building the answer.
 */
export async function tableVersion(prisma: ReadClient, table: VersionedTable): Promise<string> {
  const rows = await prisma.$queryRaw<{ version: string }[]>`SELECT version::text AS version FROM data_versions WHERE name = ${table}`;
  return rows[0]?.version ?? "0";
}
