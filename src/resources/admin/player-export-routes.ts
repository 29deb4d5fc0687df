import { z } from "zod";
import { errors } from "../../core/errors.js";
import { formAnswer } from "../../entities/form.js";
import { infectedStats } from "../../entities/infected.js";
import { player } from "../../entities/player.js";
import { rewardLog } from "../../entities/reward-log.js";
import { world } from "../../entities/world.js";
import { id, text } from "../../fields/rules.js";
import { defineRoute } from "../../http/route.js";
import { auditEntry } from "./audit-routes.js";
import { ADMIN_CALLERS } from "./callers.js";
import { readPlayerRows } from "./player-export-queries.js";

/** The export's format: a document a person can read (the API's field names) and a machine can parse. */
export const PLAYER_EXPORT_FORMAT = "community-player-export";
export const PLAYER_EXPORT_VERSION = 1;

/** What each part of an export holds: its manifest says it, in the document itself. */
export const PLAYER_EXPORT_PARTS = {
  player: "The player's record, every field (PlayerFull): pseudo, token, address, chat account, connection history, time played",
  infectedStats: "Their Infected statistics (InfectedStats), or null",
  formAnswers: "Their form answers (FormAnswer): free-text answers and video links",
  rewardLogs: "The rewards recorded for them (RewardLog)",
  worlds: "The Freebuild worlds they own (World)",
  auditEntries: "The audit log's entries of those records and of the player (AuditEntry): who changed what, when, the values written",
  events: "The events of the outbox whose data names them (the webhook body: type, timestamp, data), as webhooks delivered them",
} as const;

const event = z.strictObject({
  messageId: z.string().meta({ description: "The webhook-id header its deliveries carried" }),
  type: z.string().meta({ example: "reward_log.created" }),
  timestamp: z.string().meta({ example: "2026-11-25T10:00:00.000Z" }),
  data: z.record(z.string(), z.unknown()).meta({ description: "The record as the API answered it then" }),
});

const exportDocument = z
  .strictObject({
    manifest: z.strictObject({
      format: z.literal(PLAYER_EXPORT_FORMAT),
      version: z.literal(PLAYER_EXPORT_VERSION),
      madeAt: z.string().meta({ description: "When the export was made (ISO 8601, UTC)", example: "2026-12-02T10:00:00.000Z" }),
      madeBy: z.string().meta({ description: "The API user who asked (recorded in the audit log, action player.export)", example: "user-A" }),
      player: z.strictObject({ id: z.number().int(), pseudo: z.string() }),
      parts: z.strictObject(Object.fromEntries(Object.keys(PLAYER_EXPORT_PARTS).map((k) => [k, z.string()])) as Record<keyof typeof PLAYER_EXPORT_PARTS, z.ZodString>),
      counts: z.record(z.string(), z.number().int()).meta({ description: "Rows per part" }),
    }),
    player: player.full.response,
    infectedStats: infectedStats.full.response.nullable(),
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
      "One JSON document: the player, their statistics, form answers, reward logs and worlds, the audit entries of those records " +
      "and the events that carry their data, with a manifest saying what each part is and when it was made. By `id` or by `pseudo` " +
      "(regardless of case), one of the two. Read in one snapshot. Recorded in the audit log (player.export, who asked, the counts), " +
      "in the same transaction: an export is never made unrecorded (during a write freeze, it waits with the writes: 503). " +
      "Never stored: a request resent with its Idempotency-Key is answered 409, make the export again. The admin routes' callers (groups A and B).",
    callers: ADMIN_CALLERS,
    body: z
      .strictObject({
        id: id.optional().meta({ description: "The player's id" }),
        pseudo: text(64).optional().meta({ description: "The player's pseudo, regardless of case" }),
      })
      .meta({ example: { pseudo: "Steve" } }),
    response: exportDocument,
    successStatus: 200,
    errors: { 404: "No such player: `Player not found`.", 409: "Resent with the Idempotency-Key of an export: exports are not kept, make it again." },
    async handler({ body }, { db, audit, source, now }) {
      if ((body.id === undefined) === (body.pseudo === undefined)) throw errors.validation("id, pseudo: send one of them");
      const found = await readPlayerRows(db, body.id !== undefined ? { id: body.id } : { pseudo: body.pseudo! });
      if (!found) throw errors.notFound("Player");
      const counts = {
        player: 1,
        infectedStats: found.infectedStats ? 1 : 0,
        formAnswers: found.formAnswers.length,
        rewardLogs: found.rewardLogs.length,
        worlds: found.worlds.length,
        auditEntries: found.auditEntries.length,
        events: found.events.length,
      };
      const playerId = found.player.id as number;
      await audit({ action: "player.export", target: `player:${playerId}`, changes: counts });
      return {
        manifest: {
          format: PLAYER_EXPORT_FORMAT,
          version: PLAYER_EXPORT_VERSION,
          madeAt: now().toISOString(),
          madeBy: source.actor,
          player: { id: playerId, pseudo: found.player.pseudo as string },
          parts: PLAYER_EXPORT_PARTS,
          counts,
        },
        ...found,
      };
    },
    replayInstead: () => errors.conflict("This export was made by an earlier request with this Idempotency-Key; exports are not kept: make it again"),
  }),
];
