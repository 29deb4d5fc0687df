import type { DbClient } from "../../audit/audit.js";
import { isRecordNotFound } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import type { Cosmetic, Prisma, PrismaClient } from "../../generated/prisma/client.js";

/**
 * Hot path (shop pages): raw SQL through Prisma, measured ahead of findUnique
 * by the benchmark. The row's version (its ETag) comes with it.
 */
export async function cosmeticById(prisma: PrismaClient, id: number): Promise<Cosmetic | undefined> {
  const rows = await prisma.$queryRaw<Cosmetic[]>`
    SELECT id, name, type, rarity, game, "argumentFr", "argumentEn", image, lootbox, price, description,
           collection, render, permanent, version
      FROM cosmetics WHERE id = ${id}`;
  return rows[0];
}

/**
 * One UPDATE of the fields sent. With `versions` (from If-Match) the version
 * check is in the same statement's WHERE, so no writer can slip in between
 * the check and the write; PostgreSQL re-checks the WHERE on the newest row
 * when a concurrent update held it. The row trigger bumps the version.
 */
export async function updateCosmetic(
  prisma: DbClient,
  id: number,
  data: Prisma.CosmeticUpdateInput,
  versions: readonly number[] | undefined,
): Promise<Cosmetic> {
  try {
    if (versions?.length === 0) throw new NoVersionMatches();
    const where = versions ? { id, OR: versions.map((version) => ({ version })) } : { id };
    return await prisma.cosmetic.update({ where, data });
  } catch (error) {
    if (!(error instanceof NoVersionMatches) && !isRecordNotFound(error)) throw error;
    // Nothing was written; only the answer depends on whether the cosmetic exists at all.
    if (versions && (await prisma.cosmetic.count({ where: { id } })) > 0) throw errors.preconditionFailed(`Cosmetic ${id}`);
    throw errors.notFound("Cosmetic");
  }
}

class NoVersionMatches extends Error {}
