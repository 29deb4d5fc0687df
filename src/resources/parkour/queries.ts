import { jsonList } from "../../db/json-list.js";
import type { ReadClient } from "../../db/client.js";
import { Prisma } from "../../generated/prisma/client.js";
import { parkourMap } from "./entity.js";

const ALL_MAPS = Prisma.sql`SELECT ${parkourMap.full.columns} FROM parkour_maps`;

/** All maps as JSON text built by PostgreSQL; polled by plugins. */
export function allMapsJson(prisma: ReadClient): Promise<string> {
  return jsonList(prisma, ALL_MAPS, "r.id");
}
