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
