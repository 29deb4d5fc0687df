import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { toParkourMap } from "./shape.js";

export const parkourRoutes = [
  defineRoute({
    method: "GET",
    path: "/parkour/get-all-maps",
    summary: "All parkour maps, ordered by id",
    callers: ["A", "B", "C"],
    query: z.strictObject({}),
    async handler(_input, { deps }) {
      return (await deps.db.prisma.parkourMap.findMany({ orderBy: { id: "asc" } })).map(toParkourMap);
    },
  }),
];
