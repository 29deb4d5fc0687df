import { z } from "zod";
import { errors } from "../../core/errors.js";
import { queryInt } from "../../fields/query-params.js";
import { id, text } from "../../fields/rules.js";
import { defineRoute, Page } from "../../http/route.js";
import { erasedMessage, erasePlayer, PLAYER_ERASED_EVENT, type PlayerSelector } from "../../privacy/erasure.js";
import { ERASURE_ID, type ErasureReceipt } from "../../privacy/ledger.js";
import { readReceipts } from "../../privacy/receipts.js";
import { ADMIN_CALLERS } from "./callers.js";
import { DEFAULT_LIMIT, NOT_A_CURSOR, nextCursorField, pageQuery } from "./paging.js";

const counts = z.record(z.string(), z.number().int());

export const erasureReceipt = z
  .strictObject({
    id: z.string().regex(ERASURE_ID).meta({ example: "era_3f1c0d2b9a8e4f6d8c7b6a5f4e3d2c1b" }),
    playerId: z.number().int().meta({ description: "The erased player's id: all that is kept of them", example: 7 }),
    erasedAt: z.string().meta({ description: "When (ISO 8601, UTC)", example: "2026-12-02T10:00:00.000Z" }),
    erasedBy: z.string().meta({ description: "Who asked: the API user, or `cli:<os user>`", example: "user-A" }),
    removed: counts.meta({
      description: "Rows deleted per kind",
      example: { player: 1, infectedStats: 1, leaderboards: 14, formAnswers: 2, rewardLogs: 12, worlds: 1 },
    }),
    scrubbed: counts.meta({
      description: "Copies emptied of their values per kind: audit entries, events, webhook deliveries, stored idempotent answers",
      example: { auditEntries: 15, events: 16, deliveries: 4, idempotentAnswers: 1 },
    }),
  })
  .meta({ id: "ErasureReceipt" });

export function selectorOf(body: { id?: number | undefined; pseudo?: string | undefined }): PlayerSelector {
  if ((body.id === undefined) === (body.pseudo === undefined)) throw errors.validation("id, pseudo: send one of them");
  return body.id !== undefined ? { id: body.id } : { pseudo: body.pseudo! };
}

export const playerSelectorBody = z.strictObject({
  id: id.optional().meta({ description: "The player's id" }),
  pseudo: text(64).optional().meta({ description: "The player's pseudo, regardless of case" }),
});

const receiptCursor = z.string("expected a single value").regex(ERASURE_ID, NOT_A_CURSOR);

export const playerErasureRoutes = [
  defineRoute({
    method: "POST",
    path: "/admin/players/erase",
    summary: "Erase one player (GDPR art. 17): their rows deleted, every copy scrubbed, a receipt kept",
    description:
      "By `id` or by `pseudo` (regardless of case), one of the two. In one transaction: their statistics, form answers, reward logs, " +
      "worlds and the player are deleted; the audit entries of those records keep their field names but lose their values; the events " +
      "naming them keep their type and place in the stream with only the ids left (and `erased`, the receipt's id); webhook deliveries " +
      "lose the receiver's answer; stored idempotent answers naming them become this route's 410. A write naming the player while it " +
      `runs waits, then is refused (409, no such player). Announced as \`${PLAYER_ERASED_EVENT}\` (the id and the receipt's id alone). ` +
      "The receipt is kept (GET /admin/players/erasures), in every backup and in the erasure ledger (ERASURE_LEDGER): a restore of a " +
      "backup made before re-applies it. Final: there is no undo. The admin routes' callers (groups A and B).",
    callers: ADMIN_CALLERS,
    body: playerSelectorBody.meta({ example: { pseudo: "Steve" } }),
    response: erasureReceipt,
    successStatus: 200,
    errors: {
      404: "No such player: `Player not found` (an erased player's pseudo is not kept: by pseudo, an erased player is not found).",
      410: "By id, a player erased before: the message gives the receipt (`Player 7 was erased at … (receipt era_…)`); nothing was done.",
    },
    async handler({ body }, { db, source, erasureLedger }) {
      const outcome = await erasePlayer(db, selectorOf(body), source, { ledger: erasureLedger });
      if (outcome.kind === "none") throw errors.notFound("Player");
      if (outcome.kind === "already") throw errors.playerErased(erasedMessage(outcome.receipt));
      return outcome.receipt;
    },
  }),
  defineRoute({
    method: "GET",
    path: "/admin/players/erasures",
    summary: "List the erasure receipts, newest first",
    description:
      "Every erasure made here or re-applied by a restore, newest first; `playerId` finds one player's. At most `limit` " +
      `(default ${DEFAULT_LIMIT}); \`nextCursor\` names the next page. The admin routes' callers (groups A and B).`,
    callers: ADMIN_CALLERS,
    paged: true,
    query: z.strictObject({
      playerId: queryInt(id).optional().meta({ description: "One player's receipt", example: 7 }),
      ...pageQuery("Receipts"),
      cursor: receiptCursor.optional().meta({ description: "From nextCursor or the Link header of the page before" }),
    }),
    response: z.strictObject({ erasures: z.array(erasureReceipt), nextCursor: nextCursorField }),
    async handler({ query }, { db }) {
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows: ErasureReceipt[] | undefined = await readReceipts(db, { playerId: query.playerId, after: query.cursor, limit: limit + 1 });
      if (!rows) throw errors.validation(`cursor: ${NOT_A_CURSOR}`);
      const erasures = rows.slice(0, limit);
      const nextCursor = rows.length > limit ? erasures.at(-1)!.id : null;
      const params = new URLSearchParams({ ...(query.playerId ? { playerId: String(query.playerId) } : {}), limit: String(limit) });
      if (nextCursor) params.set("cursor", nextCursor);
      return new Page({ erasures, nextCursor }, nextCursor ? params.toString() : undefined);
    },
  }),
];
