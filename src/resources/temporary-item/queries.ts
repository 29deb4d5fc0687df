import type { PrismaClient } from "../../generated/prisma/client.js";

/**
 * The ETag of the active items: the table's version, and the last start or
 * end date already passed. The active set only changes when data changes or
 * when now crosses one of those dates, so the pair names it.
 */
export async function activeItemsVersion(prisma: PrismaClient, now: Date): Promise<string> {
  const [row] = await prisma.$queryRaw<{ version: string; boundary: string | null }[]>`
    SELECT (SELECT version::text FROM data_versions WHERE name = 'temporary_items') AS version,
           extract(epoch FROM greatest((SELECT max("startDate") FROM temporary_items WHERE "startDate" <= ${now}),
                                       (SELECT max("endDate") FROM temporary_items WHERE "endDate" <= ${now})))::bigint::text AS boundary`;
  return `items-v${row?.version ?? "0"}-${row?.boundary ?? "0"}`;
}

/** The active items as JSON text built by PostgreSQL (see player/queries.ts); ids as strings. */
export async function activeItemsJson(prisma: PrismaClient, now: Date): Promise<string> {
  const [row] = await prisma.$queryRaw<{ json: string }[]>`
    SELECT coalesce('[' || string_agg(row_to_json(t)::text, ',' ORDER BY t.id::int) || ']', '[]') AS json
      FROM (SELECT id::text AS id, "itemName", "itemDescription", price,
                   to_char("startDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "startDate",
                   to_char("endDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "endDate"
              FROM temporary_items WHERE "startDate" <= ${now} AND "endDate" > ${now}) t`;
  return row!.json;
}
