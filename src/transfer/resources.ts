import { ENTITIES } from "../entities/all.js";
import type { Entity } from "../fields/entity.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";

/**
 * The resources the operator's import/export moves: each entity, in the API's
 * own shapes, under the key of its array in the file.
 */
export interface TransferResource {
  /** Key of the array in the import/export file: the table's name in camelCase. */
  key: string;
  entity: Entity;
  exportAll(prisma: PrismaClient): Promise<Record<string, unknown>[]>;
  /** At most `limit` records after the one whose key is `after` (from the first when undefined), each with its key as `__key` first. */
  exportBatch(prisma: PrismaClient, after: unknown, limit: number): Promise<Record<string, unknown>[]>;
}

function transfer(entity: Entity): TransferResource {
  // The full record in the answer's shape, made by PostgreSQL as the list routes make it.
  const all = Prisma.sql`SELECT ${entity.full.columns} FROM ${Prisma.raw(`"${entity.table}"`)} ORDER BY ${Prisma.raw(`"${entity.primaryKey}"`)}`;
  const table = Prisma.raw(`"${entity.table}"`);
  const key = Prisma.raw(`"${entity.primaryKey}"`);
  return {
    key: entity.table.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()),
    entity,
    exportAll: (prisma) => prisma.$queryRaw<Record<string, unknown>[]>(all),
    exportBatch: (prisma, after, limit) =>
      prisma.$queryRaw<Record<string, unknown>[]>(
        Prisma.sql`SELECT ${key} AS "__key", ${entity.full.columns} FROM ${table}
          ${after === undefined ? Prisma.empty : Prisma.sql`WHERE ${key} > ${after}`} ORDER BY ${key} LIMIT ${limit}`,
      ),
  };
}

/** In an order that satisfies foreign keys (players first). */
export const TRANSFER_RESOURCES: readonly TransferResource[] = ENTITIES.map(transfer);
