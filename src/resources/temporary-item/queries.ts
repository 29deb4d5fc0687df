import type { ReadClient } from "../../db/client.js";
import { listOf } from "../../db/list-query.js";
import { temporaryItem } from "../../entities/temporary-item.js";
import { Prisma } from "../../generated/prisma/client.js";

/**
 * The ETag of the active items: the table's version, and the last start or
 * end date already passed. The active set only changes when data changes or
 * when now crosses one of those dates, so the pair names it.
 */
export async function activeItemsVersion(prisma: ReadClient, now: Date): Promise<string> {
  const [row] = await prisma.$queryRaw<{ version: string; boundary: string | null }[]>`
    SELECT (SELECT version::text FROM data_versions WHERE name = 'temporary_items') AS version,
           extract(epoch FROM greatest((SELECT max("startDate") FROM temporary_items WHERE "startDate" <= ${now}),
                                       (SELECT max("endDate") FROM temporary_items WHERE "endDate" <= ${now})))::bigint::text AS boundary`;
  return `items-v${row?.version ?? "0"}-${row?.boundary ?? "0"}`;
}

/** The items, ordered by id (written as strings, ordered as the numbers they are). */
export const allItems = listOf(temporaryItem, temporaryItem.full);

/** The active items: startDate <= now < endDate. */
export const activeAt = (now: Date) => Prisma.sql`t."startDate" <= ${now} AND t."endDate" > ${now}`;

/** The items that became active after `since` with no write: their start passed, their end has not. */
export const startedBetween = (since: Date, now: Date) => Prisma.sql`t."startDate" > ${since} AND ${activeAt(now)}`;
