import type { z } from "zod";
import { cosmeticSchema, toCosmetic } from "../resources/cosmetic/shape.js";
import { formAnswerSchema, toFormAnswer } from "../resources/form/shape.js";
import { infectedStatsSchema, toInfectedStats } from "../resources/infected/shape.js";
import { parkourMapSchema, toParkourMap } from "../resources/parkour/shape.js";
import { playerFullSchema, toPlayerFull } from "../resources/player/shape.js";
import { rewardLogSchema, toRewardLog } from "../resources/reward-log/shape.js";
import { temporaryItemSchema, toTemporaryItem } from "../resources/temporary-item/shape.js";
import { toWorld, worldSchema } from "../resources/world/shape.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/**
 * The resources the operator's import/export moves, in the API's own shapes,
 * listed in an order that satisfies foreign keys (players first).
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

const resource = (r: TransferResource) => r;

export const TRANSFER_RESOURCES: readonly TransferResource[] = [
  resource({
    key: "players",
    table: "players",
    idColumn: "id",
    serial: true,
    schema: playerFullSchema,
    references: {},
    unique: [
      { columns: ["pseudo"], constraint: "players_pseudo_key", caseInsensitive: true },
      { columns: ["nickname"], constraint: "players_nickname_key", caseInsensitive: true },
    ],
    exportAll: async (p) => (await p.player.findMany({ orderBy: { id: "asc" } })).map(toPlayerFull),
  }),
  resource({
    key: "cosmetics",
    table: "cosmetics",
    idColumn: "id",
    serial: true,
    schema: cosmeticSchema,
    references: {},
    unique: [{ columns: ["name"], constraint: "cosmetics_name_key", caseInsensitive: false }],
    exportAll: async (p) => (await p.cosmetic.findMany({ orderBy: { id: "asc" } })).map(toCosmetic),
  }),
  resource({
    key: "formAnswers",
    table: "form_answers",
    idColumn: "id",
    serial: true,
    schema: formAnswerSchema,
    references: { playerId: "players" },
    unique: [],
    exportAll: async (p) => (await p.formAnswer.findMany({ orderBy: { id: "asc" } })).map(toFormAnswer),
  }),
  resource({
    key: "infectedStats",
    table: "infected_stats",
    idColumn: "playerId",
    serial: false,
    schema: infectedStatsSchema,
    references: { playerId: "players" },
    unique: [],
    exportAll: async (p) => (await p.infectedStats.findMany({ orderBy: { playerId: "asc" } })).map(toInfectedStats),
  }),
  resource({
    key: "temporaryItems",
    table: "temporary_items",
    idColumn: "id",
    serial: true,
    schema: temporaryItemSchema,
    references: {},
    unique: [],
    exportAll: async (p) => (await p.temporaryItem.findMany({ orderBy: { id: "asc" } })).map(toTemporaryItem),
  }),
  resource({
    key: "rewardLogs",
    table: "reward_logs",
    idColumn: "id",
    serial: true,
    schema: rewardLogSchema,
    references: { playerId: "players" },
    unique: [{ columns: ["playerId", "rewardId", "rewardedAt"], constraint: "reward_logs_player_reward_time_key", caseInsensitive: false }],
    exportAll: async (p) => (await p.rewardLog.findMany({ orderBy: { id: "asc" } })).map(toRewardLog),
  }),
  resource({
    key: "worlds",
    table: "worlds",
    idColumn: "id",
    serial: true,
    schema: worldSchema,
    references: { ownerId: "players" },
    unique: [],
    exportAll: async (p) => (await p.world.findMany({ orderBy: { id: "asc" } })).map(toWorld),
  }),
  resource({
    key: "parkourMaps",
    table: "parkour_maps",
    idColumn: "id",
    serial: true,
    schema: parkourMapSchema,
    references: {},
    unique: [],
    exportAll: async (p) => (await p.parkourMap.findMany({ orderBy: { id: "asc" } })).map(toParkourMap),
  }),
];
