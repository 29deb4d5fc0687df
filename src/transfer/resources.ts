import type { z } from "zod";
import { uniqueConstraintsOf } from "../db/constraints.js";
import type { Entity } from "../fields/entity.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { cosmetic } from "../resources/cosmetic/entity.js";
import { formAnswer } from "../resources/form/entity.js";
import { infectedStats } from "../resources/infected/entity.js";
import { parkourMap } from "../resources/parkour/entity.js";
import { player } from "../resources/player/entity.js";
import { rewardLog } from "../resources/reward-log/entity.js";
import { temporaryItem, temporaryItemRecord } from "../resources/temporary-item/entity.js";
import { world } from "../resources/world/entity.js";

/**
 * The resources the operator's import/export moves, in the API's own shapes,
 * derived from their entities.
 */
export interface TransferResource {
  /** Key of the array in the import/export file. */
  key: string;
  table: string;
  /** Primary-key column (upserts go by it). */
  idColumn: string;
  /** True when the table's id comes from a sequence that must follow imported ids. */
  serial: boolean;
  schema: z.ZodType<Record<string, unknown>>;
  /** Foreign keys: column → referenced table. */
  references: Record<string, string>;
  /** Unique keys other than the id (one column or several), to name a duplicate's value and index. */
  unique: { columns: string[]; constraint: string; caseInsensitive: boolean }[];
  exportAll(prisma: PrismaClient): Promise<Record<string, unknown>[]>;
}

function transfer(key: string, entity: Entity, schema: z.ZodType<Record<string, unknown>> = entity.record): TransferResource {
  // The full record in the answer's shape, made by PostgreSQL as the list routes make it.
  const all = Prisma.sql`SELECT ${entity.full.columns} FROM ${Prisma.raw(`"${entity.table}"`)} ORDER BY ${Prisma.raw(`"${entity.primaryKey}"`)}`;
  return {
    key,
    table: entity.table,
    idColumn: entity.primaryKey,
    serial: entity.generatedKey,
    schema,
    references: entity.references,
    unique: uniqueConstraintsOf(entity.table),
    exportAll: (prisma) => prisma.$queryRaw<Record<string, unknown>[]>(all),
  };
}

/** In an order that satisfies foreign keys (players first). */
export const TRANSFER_RESOURCES: readonly TransferResource[] = [
  transfer("players", player),
  transfer("cosmetics", cosmetic),
  transfer("formAnswers", formAnswer),
  transfer("infectedStats", infectedStats),
  transfer("temporaryItems", temporaryItem, temporaryItemRecord),
  transfer("rewardLogs", rewardLog),
  transfer("worlds", world),
  transfer("parkourMaps", parkourMap),
];
