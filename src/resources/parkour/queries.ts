import type { PrismaClient } from "../../generated/prisma/client.js";

/** All maps as JSON text built by PostgreSQL (see player/queries.ts); polled by plugins. */
export async function allMapsJson(prisma: PrismaClient): Promise<string> {
  const [row] = await prisma.$queryRaw<{ json: string }[]>`
    SELECT coalesce('[' || string_agg(row_to_json(m)::text, ',' ORDER BY m.id) || ']', '[]') AS json
      FROM (SELECT id, name, enable, "spawnLocation", difficulty FROM parkour_maps) m`;
  return row!.json;
}
