import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { toTemporaryItem } from "./shape.js";

export const temporaryItemRoutes = [
  defineRoute({
    method: "GET",
    path: "/temporary-item/get-active-items",
    summary: "Temporary shop items active now (startDate <= now < endDate), ordered by id",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    async handler(_input, { deps }) {
      const now = deps.now();
      const items = await deps.db.prisma.temporaryItem.findMany({
        where: { startDate: { lte: now }, endDate: { gt: now } },
        orderBy: { id: "asc" },
      });
      return items.map(toTemporaryItem);
    },
  }),
];
