import { z } from "zod";
import { count, formatTimestamp, id, out, text, timestamp } from "../../http/fields.js";
import type { TemporaryItem } from "../../generated/prisma/client.js";

/** The id is written as a string; a number is accepted on the way in (the spec's sample shows one). */
const stringId = z
  .union([z.string().regex(/^\d+$/, "expected an id: a string of digits"), z.int()], {
    error: "expected an id: a string of digits",
  })
  .transform((v) => Number(v))
  .pipe(id);

export const temporaryItemSchema = z
  .strictObject({
    id: stringId,
    itemName: text(128),
    itemDescription: text(1000, 0),
    price: count,
    startDate: timestamp,
    endDate: timestamp,
  })
  .refine((item) => item.endDate > item.startDate, { message: "expected a date after startDate", path: ["endDate"] });

export function toTemporaryItem(t: TemporaryItem) {
  return {
    id: String(t.id),
    itemName: t.itemName,
    itemDescription: t.itemDescription,
    price: t.price,
    startDate: formatTimestamp(t.startDate),
    endDate: formatTimestamp(t.endDate),
  };
}

export const temporaryItemResponse = z
  .strictObject({
    id: z.string().regex(/^\d+$/).meta({ description: "Item id, written as a string", example: "5" }),
    itemName: out.text("Item name", "Double XP"),
    itemDescription: out.text("Item description"),
    price: out.count("Item price"),
    startDate: out.timestamp("Moment from which the item can be used"),
    endDate: out.timestamp("Moment at which its use ends"),
  })
  .meta({ id: "TemporaryItem" });
