import type { DbClient, ReadClient } from "../../db/client.js";
import { errors } from "../../core/errors.js";
import { Prisma, type Cosmetic } from "../../generated/prisma/client.js";
import type { RowUpdate } from "../../db/sql.js";
import { cosmetic } from "../../entities/cosmetic.js";

/**
 * Hot path (shop pages): raw SQL through Prisma, measured ahead of findUnique
 * by the benchmark. The row's version (its ETag) comes with it.
 */
export async function cosmeticById(prisma: ReadClient, id: number): Promise<Cosmetic | undefined> {
  const rows = await prisma.$queryRaw<Cosmetic[]>`SELECT ${cosmetic.full.columns}, version FROM cosmetics WHERE id = ${id}`;
  return rows[0];
}

/**
 * One UPDATE of the fields given, conditional on the version when If-Match
 * named some (`versions`): the check and the write are one statement, so no
 * concurrent writer slips in between. `run` executes it (the route runs it
 * with its audit entry, through ctx.auditedWrite).
 */
export async function updateCosmetic(
  prisma: DbClient,
  id: number,
  data: Record<string, unknown>,
  versions: readonly number[] | undefined,
  run: (update: RowUpdate) => Promise<Cosmetic[]> = (update) => prisma.$queryRaw<Cosmetic[]>(update.alone()),
): Promise<Cosmetic> {
  const matches = versions === undefined ? Prisma.empty : Prisma.sql` AND version IN (${Prisma.join(versions.length ? versions : [-1])})`;
  const [row] = await run(cosmetic.update(id, data, matches));
  if (row) return row;
  // Nothing was written; only the answer depends on whether the cosmetic exists at all.
  if (versions && (await prisma.cosmetic.count({ where: { id } })) > 0) throw errors.preconditionFailed(`Cosmetic ${id}`);
  throw errors.notFound("Cosmetic");
}

