import { z } from "zod";
import { errors } from "../../core/errors.js";
import { formAnswer } from "../../entities/form.js";
import { infectedStats, STATISTICS } from "../../entities/infected.js";
import { player } from "../../entities/player.js";
import { rewardLog } from "../../entities/reward-log.js";
import { world } from "../../entities/world.js";
import { defineRoute } from "../../http/route.js";
import { erasedMessage } from "../../privacy/erasure.js";
import {
  BEING_ERASED,
  exportCounts,
  exportDocument,
  PLAYER_EXPORT_FORMAT,
  PLAYER_EXPORT_PARTS,
  PLAYER_EXPORT_VERSION,
  readPlayerRows,
} from "../../privacy/export.js";
import { receiptOf } from "../../privacy/receipts.js";
import { auditEntry } from "./audit-routes.js";
import { ADMIN_CALLERS } from "./callers.js";
import { playerSelectorBody, selectorOf } from "./player-erasure-routes.js";

const event = z.strictObject({
  messageId: z.string().meta({ description: "The webhook-id header its deliveries carried" }),
  type: z.string().meta({ example: "reward_log.created" }),
  timestamp: z.string().meta({ example: "2026-11-25T10:00:00.000Z" }),
  data: z.record(z.string(), z.unknown()).meta({ description: "The record as the API answered it then" }),
});

/** A period's gains: the leaderboard period and what the player gained in it, per statistic. */
const gains = z.strictObject({
  period: z.strictObject({
    kind: z.enum(["day", "week", "month", "season"]),
    key: z.string().meta({ example: "2026-W49" }),
    startsAt: z.string().meta({ example: "2026-11-30T00:00:00Z" }),
    endsAt: z.string().nullable().meta({ description: "null: a season not ended yet" }),
  }),
  ...Object.fromEntries(STATISTICS.map((stat) => [stat, z.number().int()])),
});

const exportSchema = z
  .strictObject({
    manifest: z.strictObject({
      format: z.literal(PLAYER_EXPORT_FORMAT),
      version: z.literal(PLAYER_EXPORT_VERSION),
      madeAt: z.string().meta({ description: "When the export was made (ISO 8601, UTC)", example: "2026-12-02T10:00:00.000Z" }),
      madeBy: z.string().meta({ description: "The API user who asked (recorded in the audit log, action player.export)", example: "user-A" }),
      player: z.strictObject({ id: z.number().int(), pseudo: z.string() }),
      parts: z.strictObject(
        Object.fromEntries(Object.keys(PLAYER_EXPORT_PARTS).map((k) => [k, z.string()])) as Record<keyof typeof PLAYER_EXPORT_PARTS, z.ZodString>,
      ),
      counts: z.record(z.string(), z.number().int()).meta({ description: "Rows per part" }),
    }),
    player: player.full.response,
    infectedStats: infectedStats.full.response.nullable(),
    leaderboards: z.array(gains),
    formAnswers: z.array(formAnswer.full.response),
    rewardLogs: z.array(rewardLog.full.response),
    worlds: z.array(world.full.response),
    auditEntries: z.array(auditEntry),
    events: z.array(event),
  })
  .meta({ id: "PlayerExport" });

export const playerExportRoutes = [
  defineRoute({
    method: "POST",
    path: "/admin/players/export",
    summary: "Export one player's personal data (GDPR art. 15, 20): every row that names them",
    description:
      "One JSON document: the player, their statistics and leaderboard gains per period, form answers, reward logs and worlds, the audit entries of those records " +
      "and the events that carry their data, with a manifest saying what each part is and when it was made. By `id` or by `pseudo` " +
      "(regardless of case), one of the two. Read in one snapshot. Recorded in the audit log (player.export, who asked, the counts), " +
      "in the same transaction: an export is never made unrecorded (during a write freeze, it waits with the writes: 503). " +
      "Never stored: a request resent with its Idempotency-Key is answered 409, make the export again. The admin routes' callers (groups A and B).",
    callers: ADMIN_CALLERS,
    body: playerSelectorBody.meta({ example: { pseudo: "Steve" } }),
    response: exportSchema,
    successStatus: 200,
    errors: {
      404: "No such player: `Player not found`.",
      409: "The player is being erased (`Player 7 is being erased: there is nothing to export`), or the request was resent with the Idempotency-Key of an export: exports are not kept, make it again.",
      410: "By id, a player erased before: the message gives the receipt; nothing of theirs is left to export.",
    },
    async handler({ body }, { db, audit, source, now }) {
      const selector = selectorOf(body);
      const found = await readPlayerRows(db, selector);
      if (found === BEING_ERASED)
        throw errors.conflict(`Player ${"id" in selector ? selector.id : `'${selector.pseudo}'`} is being erased: there is nothing to export`);
      if (!found) {
        const receipt = "id" in selector ? await receiptOf(db, selector.id) : undefined;
        throw receipt ? errors.playerErased(erasedMessage(receipt)) : errors.notFound("Player");
      }
      const counts = exportCounts(found);
      await audit({ action: "player.export", target: `player:${found.player.id as number}`, changes: counts });
      return exportDocument(found, source.actor, now());
    },
    replayInstead: () => errors.conflict("This export was made by an earlier request with this Idempotency-Key; exports are not kept: make it again"),
  }),
];
