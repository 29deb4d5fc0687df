import { z } from "zod";
import { temporaryItem } from "../../entities/temporary-item.js";
import { defineRoute } from "../../http/route.js";
import { activeAt, activeItemsVersion, allItems, startedBetween } from "./queries.js";

export const temporaryItemRoutes = [
  defineRoute({
    method: "GET",
    path: "/temporary-item/get-active-items",
    summary: "Temporary shop items active now",
    description: "Items with startDate <= now < endDate, ordered by id; ids are written as strings. [] when none.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({}),
    response: z.array(temporaryItem.full.response),
    etag: (_input, { db, now }) => activeItemsVersion(db, now()),
    list: { source: allItems, where: (_input, { now }) => activeAt(now()), joinedSince: startedBetween },
  }),
];
