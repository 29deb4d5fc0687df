import type { Cosmetic, PrismaClient } from "../../generated/prisma/client.js";

/**
 * Hot path (shop pages): raw SQL through Prisma, measured ahead of findUnique
 * by the benchmark, with the cosmetics table's version in the same round trip
 * (for the ETag).
 */
export async function cosmeticById(prisma: PrismaClient, id: number): Promise<{ cosmetic: Cosmetic | undefined; version: string }> {
  const rows = await prisma.$queryRaw<(Cosmetic & { tableVersion: string })[]>`
    SELECT c.id, c.name, c.type, c.rarity, c.game, c."argumentFr", c."argumentEn", c.image, c.lootbox, c.price, c.description,
           c.collection, c.render, c.permanent, v.version::text AS "tableVersion"
      FROM data_versions v LEFT JOIN cosmetics c ON c.id = ${id}
     WHERE v.name = 'cosmetics'`;
  const row = rows[0];
  if (!row || row.id === null) return { cosmetic: undefined, version: row?.tableVersion ?? "0" };
  const { tableVersion, ...cosmetic } = row;
  return { cosmetic, version: tableVersion };
}
