import { z } from "zod";
import { tableVersion } from "../../db/versions.js";
import { parkourMap } from "../../entities/parkour.js";
import { defineRoute } from "../../http/route.js";
import { allMaps } from "./queries.js";

export const parkourRoutes = [
  defineRoute({
    method: "GET",
    path: "/parkour/get-all-maps",
    summary: "All parkour maps",
    description: "Every parkour map, ordered by id; [] when none.",
    callers: ["A", "B", "C"],
    query: z.strictObject({}),
    response: z.array(parkourMap.full.response),
    etag: async (_input, { db }) => `maps-v${await tableVersion(db, parkourMap)}`,
    list: { source: allMaps },
  }),
];
