import { jsonList } from "../../db/json-list.js";
import { Prisma, type PrismaClient } from "../../generated/prisma/client.js";
import { parkourMap } from "./entity.js";

const ALL_MAPS = Prisma.sql`SELECT ${parkourMap.full.columns} FROM parkour_maps`;

/** All maps as JSON text built by PostgreSQL; polled by plugins. */
export function allMapsJson(prisma: PrismaClient): Promise<string> {
  return jsonList(prisma, ALL_MAPS, "r.id");
}
