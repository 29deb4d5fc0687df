import { listOf } from "../../db/list-query.js";
import { parkourMap } from "../../entities/parkour.js";

/** All maps, ordered by id; polled by plugins. */
export const allMaps = listOf(parkourMap, parkourMap.full);
