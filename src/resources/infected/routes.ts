import { z } from "zod";
import { tableVersion } from "../../db/versions.js";
import { defineRoute, JsonText } from "../../http/route.js";
import { allInfectedStatsJson } from "./queries.js";
import { infectedStats } from "./entity.js";

export const infectedRoutes = [
  defineRoute({
    method: "GET",
    path: "/infecte2/get-all-infectes",
    summary: "Infected v2 statistics of every player",
    description: "One row per player that has statistics, ordered by playerId; [] when none.",
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    response: z.array(infectedStats.full.response),
    etag: async (_input, { deps }) => `infected-v${await tableVersion(deps.db.reader, "infected_stats")}`,
    heavy: true,
    async handler(_input, { deps }) {
      return new JsonText(await allInfectedStatsJson(deps.db.reader));
    },
  }),
];
