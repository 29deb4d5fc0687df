import type { ReadClient } from "../../db/client.js";
import { Prisma } from "../../generated/prisma/client.js";
import { jsonList } from "../../db/json-list.js";
import { temporaryItem } from "./entity.js";

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

/** The active items as JSON text built by PostgreSQL; ids as strings (ordered as numbers). */
export function activeItemsJson(prisma: ReadClient, now: Date): Promise<string> {
  return jsonList(
    prisma,
    Prisma.sql`SELECT ${temporaryItem.full.columns} FROM temporary_items WHERE "startDate" <= ${now} AND "endDate" > ${now}`,
    "r.id::int",
  );
}
