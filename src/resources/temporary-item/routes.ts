import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { activeItemsVersion } from "./queries.js";
import { temporaryItemResponse, toTemporaryItem } from "./shape.js";

export const temporaryItemRoutes = [
  defineRoute({
    method: "GET",
    path: "/temporary-item/get-active-items",
    summary: "Temporary shop items active now",
    description: "Items with startDate <= now < endDate, ordered by id; ids are written as strings. [] when none.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    response: z.array(temporaryItemResponse),
    etag: (_input, { deps }) => activeItemsVersion(deps.db.prisma, deps.now()),
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
