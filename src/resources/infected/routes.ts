import { z } from "zod";
import { tableVersion } from "../../db/versions.js";
import { infectedStats } from "../../entities/infected.js";
import { defineRoute } from "../../http/route.js";
import { allInfectedStats } from "./queries.js";

export const infectedRoutes = [
  defineRoute({
    method: "GET",
    path: "/infecte2/get-all-infectes",
    summary: "Infected v2 statistics of every player",
    description: `One row per player that has statistics, ordered by ${infectedStats.primaryKey}; [] when none.`,
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    response: z.array(infectedStats.full.response),
    etag: async (_input, { db }) => `infected-v${await tableVersion(db, infectedStats)}`,
    heavy: true,
    list: { source: allInfectedStats },
  }),
];
