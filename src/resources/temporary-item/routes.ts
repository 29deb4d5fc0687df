import { z } from "zod";
import { defineRoute, JsonText } from "../../http/route.js";
import { activeItemsJson, activeItemsVersion } from "./queries.js";
import { temporaryItem } from "./entity.js";

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
    async handler(_input, { db, now }) {
      return new JsonText(await activeItemsJson(db, now()));
    },
  }),
];
