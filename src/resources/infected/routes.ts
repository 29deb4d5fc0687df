import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { infectedStatsResponse, toInfectedStats } from "./shape.js";

export const infectedRoutes = [
  defineRoute({
    method: "GET",
    path: "/infecte2/get-all-infectes",
    summary: "Infected v2 statistics of every player",
    description: "One row per player that has statistics, ordered by playerId; [] when none.",
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    response: z.array(infectedStatsResponse),
    async handler(_input, { deps }) {
      const stats = await deps.db.prisma.infectedStats.findMany({ orderBy: { playerId: "asc" } });
      return stats.map(toInfectedStats);
    },
  }),
];
