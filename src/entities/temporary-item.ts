import { z } from "zod";
import { defineEntity, field } from "../fields/entity.js";
import { id } from "../fields/rules.js";

/** The id is written as a string; a number is accepted on the way in (the spec's sample shows one). */
const stringId = z
  .union([z.string().regex(/^\d+$/, "expected an id: a string of digits"), z.int()], {
    error: "expected an id: a string of digits",
  })
  .transform((v) => Number(v))
  .pipe(id);

export const temporaryItem = defineEntity({
  table: "temporary_items",
  kind: "temporary_item",
  versioned: true,
  eventsSeenThrough: "/temporary-item/get-active-items",
  fields: {
    id: field.custom(stringId, z.string().regex(/^\d+$/), String, (column) => `${column}::text`).describe("Item id, written as a string", "5"),
    itemName: field.text(128).describe("Item name", "Double XP"),
    itemDescription: field.text(1000, 0).describe("Item description"),
    price: field.count().describe("Item price"),
    startDate: field.timestamp().describe("Moment from which the item can be used"),
    endDate: field.timestamp().after("startDate").describe("Moment at which its use ends"),
  },
  component: { id: "TemporaryItem" },
});
