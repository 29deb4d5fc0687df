import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { jsonList } from "../../db/json-list.js";

/** All maps as JSON text built by PostgreSQL; polled by plugins. */
export function allMapsJson(prisma: PrismaClient): Promise<string> {
  return jsonList(prisma, Prisma.sql`SELECT id, name, enable, "spawnLocation", difficulty FROM parkour_maps`, "r.id");
}
