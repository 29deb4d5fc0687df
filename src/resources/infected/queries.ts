import { listOf } from "../../db/list-query.js";
import { infectedStats } from "../../entities/infected.js";

/** One row per player with statistics, ordered by player. */
export const allInfectedStats = listOf(infectedStats, infectedStats.full);
