import { errors } from "../../core/errors.js";
import type { ReadClient } from "../../db/client.js";
import type { RowUpdate } from "../../db/sql.js";
import { cosmetic } from "../../entities/cosmetic.js";
import { type Cosmetic, Prisma } from "../../generated/prisma/client.js";

/**
 * Hot path (shop pages): raw SQL through Prisma, measured ahead of findUnique
 * by the benchmark. The row's version (its ETag) comes with it.
 */
export async function cosmeticById(prisma: ReadClient, id: number): Promise<Cosmetic | undefined> {
  const rows = await prisma.$queryRaw<Cosmetic[]>`SELECT ${cosmetic.full.columns}, version FROM cosmetics WHERE id = ${id}`;
  return rows[0];
}

/**
 * The UPDATE of the fields given, conditional on the version when If-Match
 * named some (`versions`): the check and the write are one statement, so no
 * concurrent writer slips in between. The route runs it with its audit entry
 * (ctx.auditedWrite); when it wrote nothing, `notUpdated` says why.
 */
export function cosmeticUpdate(id: number, data: Record<string, unknown>, versions: readonly number[] | undefined): RowUpdate {
  const matches = versions === undefined ? Prisma.empty : Prisma.sql` AND version IN (${Prisma.join(versions.length ? versions : [-1])})`;
  return cosmetic.update(id, data, matches);
}

/** Why cosmeticUpdate wrote nothing: 412 when the cosmetic exists (If-Match named none of its versions), else 404. */
export async function notUpdated(prisma: ReadClient, id: number, versions: readonly number[] | undefined): Promise<never> {
  if (versions && (await prisma.$queryRaw<unknown[]>`SELECT 1 FROM cosmetics WHERE id = ${id}`).length > 0) throw errors.preconditionFailed(`Cosmetic ${id}`);
  throw errors.notFound("Cosmetic");
}
