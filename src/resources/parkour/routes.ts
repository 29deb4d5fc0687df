import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { parkourMapResponse, toParkourMap } from "./shape.js";

export const parkourRoutes = [
  defineRoute({
    method: "GET",
    path: "/parkour/get-all-maps",
    summary: "All parkour maps",
    description: "Every parkour map, ordered by id; [] when none.",
    callers: ["A", "B", "C"],
    query: z.strictObject({}),
    response: z.array(parkourMapResponse),
    async handler(_input, { deps }) {
      return (await deps.db.prisma.parkourMap.findMany({ orderBy: { id: "asc" } })).map(toParkourMap);
    },
  }),
];
