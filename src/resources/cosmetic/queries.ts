import type { Cosmetic, PrismaClient } from "../../generated/prisma/client.js";

/** Hot path (shop pages): raw SQL through Prisma, measured ahead of findUnique by the benchmark. */
export async function cosmeticById(prisma: PrismaClient, id: number): Promise<Cosmetic | undefined> {
  const rows = await prisma.$queryRaw<Cosmetic[]>`
    SELECT id, name, type, rarity, game, "argumentFr", "argumentEn", image, lootbox, price, description, collection, render, permanent
      FROM cosmetics WHERE id = ${id}`;
  return rows[0];
}
