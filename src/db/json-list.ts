import type { ReadClient } from "./client.js";
import { Prisma } from "../generated/prisma/client.js";

/**
 * A list built as JSON text by PostgreSQL: Node passes one string through
 * instead of mapping and serialising every row. row_to_json writes the same
 * bytes as JSON.stringify for our column types (test/routes/conditional.test.ts
 * compares them), in the column order of `rows`: an entity's projection
 * (fields/entity.ts) lists them in its answer's order.
 */
export async function jsonList(prisma: ReadClient, rows: Prisma.Sql, orderBy: string): Promise<string> {
  const [row] = await prisma.$queryRaw<{ json: string }[]>(Prisma.sql`
    SELECT coalesce('[' || string_agg(row_to_json(r)::text, ',' ORDER BY ${Prisma.raw(orderBy)}) || ']', '[]') AS json
      FROM (${rows}) r`);
  return row!.json;
}
