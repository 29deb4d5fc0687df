import { randomBytes } from "node:crypto";
import { type AuditSource, recordAudit } from "../audit/audit.js";
import { ERROR_CATALOGUE } from "../core/error-catalogue.js";
import type { DbClient } from "../db/client.js";
import { recordEvent } from "../events/record.js";
import { Prisma } from "../generated/prisma/client.js";
import { appendToLedger, type ErasureReceipt } from "./ledger.js";
import { insertReceipt, receiptOf } from "./receipts.js";

/** Which player: by id, or by pseudo (regardless of case). */
export type PlayerSelector = { id: number } | { pseudo: string };

/** The event types whose data names a player, and the field that does (an export reads them, an erasure scrubs them). */
export const PLAYER_EVENT_FIELDS: Record<string, string> = {
  player: "id",
  infected_stats: "playerId",
  form: "playerId",
  reward_log: "playerId",
  world: "ownerId",
};

/** What a write route naming a player answers when resent after their erasure (its stored answer held their data). */
export const ERASED_REPLAY =
  "Resent with the Idempotency-Key of a request whose player was erased since (Error-Name PLAYER_ERASED, the receipt in the message): its first answer is not kept.";

/** The event an erasure announces: the player's id and the receipt's, nothing else of theirs. */
export const PLAYER_ERASED_EVENT = "player.erased";

export type ErasureOutcome =
  | { kind: "erased"; receipt: ErasureReceipt }
  /** Erased before (by id: the receipt names it); nothing was done. */
  | { kind: "already"; receipt: ErasureReceipt }
  | { kind: "none" };

/** The SQL predicate "the event e's data names the player whose id is `playerId`". */
export function eventNamesPlayer(playerId: Prisma.Sql): Prisma.Sql {
  return Prisma.join(
    Object.entries(PLAYER_EVENT_FIELDS).map(([kind, field]) => Prisma.sql`(e.type LIKE ${`${kind}.%`} AND (e.data::jsonb ->> ${field}) = ${playerId}::text)`),
    " OR ",
  );
}

/** A JSON object's keys kept, their values gone: the fact of a change without what it wrote. */
export const nulled = (column: string) =>
  Prisma.raw(
    `CASE WHEN jsonb_typeof(${column}) = 'object' THEN (SELECT coalesce(jsonb_object_agg(k, 'null'::jsonb), '{}'::jsonb) FROM jsonb_object_keys(${column}) k) ELSE ${column} END`,
  );

/** The answer a stored idempotent answer of theirs becomes: what a resend of that request now gets. */
function erasedAnswer(receipt: ErasureReceipt): string {
  return JSON.stringify({ code: ERROR_CATALOGUE.PLAYER_ERASED.status, message: erasedMessage(receipt) });
}

export function erasedMessage(receipt: ErasureReceipt): string {
  return `Player ${receipt.playerId} was erased at ${receipt.erasedAt} (receipt ${receipt.id}): nothing of theirs is left`;
}

/**
 * Erases one player, in `tx` (a transaction of its own: everything here commits or rolls back whole). The
 * player's row is locked first: a write naming them waits (a foreign key's check), then finds them gone and
 * is refused; one that committed before is erased with the rest. Their rows are deleted (statistics, form
 * answers, reward logs, worlds, the player); the audit entries of those records keep their field names and
 * lose their values; the events naming them keep their type, order and the ids (data: the ids and the
 * receipt's), so a stream or a delivery still sends them; the deliveries lose the receiver's answer; stored
 * idempotent answers naming them become the 410 a resend gets. The receipt is recorded in
 * player_erasures, the audit log (player.erase) and `ledger` (before commit), and announced (player.erased).
 * `receipt` re-applies one made before (a restore): same id, time and author.
 */
export async function erasePlayer(
  tx: DbClient,
  selector: PlayerSelector,
  source: AuditSource,
  options: { ledger?: string; receipt?: ErasureReceipt } = {},
): Promise<ErasureOutcome> {
  const which = "id" in selector ? Prisma.sql`id = ${selector.id}` : Prisma.sql`pseudo = ${selector.pseudo}::citext`;
  const [found] = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM players WHERE ${which} FOR UPDATE`;
  if (!found) {
    const known = "id" in selector ? await receiptOf(tx, selector.id) : undefined;
    return known ? { kind: "already", receipt: known } : { kind: "none" };
  }
  const playerId = found.id;
  const receipt: ErasureReceipt = options.receipt ?? {
    id: `era_${randomBytes(16).toString("hex")}`,
    playerId,
    erasedAt: new Date().toISOString(),
    erasedBy: source.actor,
    removed: {},
    scrubbed: {},
  };
  const [scrubbed] = await tx.$queryRaw<{ auditEntries: number; events: number; deliveries: number; idempotentAnswers: number }[]>`
    WITH targets AS (
           SELECT ${`player:${playerId}`}::text AS target
           UNION ALL SELECT 'form_answer:' || id FROM form_answers WHERE "playerId" = ${playerId}
           UNION ALL SELECT 'reward_log:' || id FROM reward_logs WHERE "playerId" = ${playerId}
           UNION ALL SELECT 'world:' || id FROM worlds WHERE "ownerId" = ${playerId}),
         a AS (
           UPDATE audit_log SET changes = ${nulled("changes")}, before = ${nulled("before")}
            WHERE target IN (SELECT target FROM targets) RETURNING 1),
         ev AS (
           UPDATE webhook_events e
              SET data = (jsonb_strip_nulls(jsonb_build_object('id', e.data::jsonb -> 'id', 'playerId', e.data::jsonb -> 'playerId', 'ownerId', e.data::jsonb -> 'ownerId'))
                          || jsonb_build_object('erased', ${receipt.id}::text))::text
            WHERE (${eventNamesPlayer(Prisma.sql`${playerId}`)}) AND e.type <> ${PLAYER_ERASED_EVENT} RETURNING e.id),
         d AS (
           UPDATE webhook_deliveries SET "lastResponse" = NULL WHERE "eventId" IN (SELECT id FROM ev) RETURNING 1),
         i AS (
           UPDATE idempotency_keys SET "responseStatus" = ${ERROR_CATALOGUE.PLAYER_ERASED.status}, "responseBody" = ${erasedAnswer(receipt)}, "responseError" = 'PLAYER_ERASED'
            WHERE "responseStatus" < 300 AND left("responseBody", 1) = '{'
              AND ${playerId}::text IN ("responseBody"::jsonb ->> 'playerId', "responseBody"::jsonb ->> 'ownerId') RETURNING 1)
    SELECT (SELECT count(*) FROM a)::int AS "auditEntries", (SELECT count(*) FROM ev)::int AS events,
           (SELECT count(*) FROM d)::int AS deliveries, (SELECT count(*) FROM i)::int AS "idempotentAnswers"`;
  const [removed] = await tx.$queryRaw<{ infectedStats: number; leaderboards: number; formAnswers: number; rewardLogs: number; worlds: number }[]>`
    WITH s AS (DELETE FROM infected_stats WHERE "playerId" = ${playerId} RETURNING 1),
         l AS (DELETE FROM leaderboard_entries WHERE "playerId" = ${playerId} RETURNING 1),
         f AS (DELETE FROM form_answers WHERE "playerId" = ${playerId} RETURNING 1),
         r AS (DELETE FROM reward_logs WHERE "playerId" = ${playerId} RETURNING 1),
         w AS (DELETE FROM worlds WHERE "ownerId" = ${playerId} RETURNING 1)
    SELECT (SELECT count(*) FROM s)::int AS "infectedStats", (SELECT count(*) FROM l)::int AS leaderboards, (SELECT count(*) FROM f)::int AS "formAnswers",
           (SELECT count(*) FROM r)::int AS "rewardLogs", (SELECT count(*) FROM w)::int AS worlds`;
  await tx.$executeRaw`DELETE FROM players WHERE id = ${playerId}`;
  if (!options.receipt) {
    receipt.removed = { player: 1, ...removed! };
    receipt.scrubbed = { ...scrubbed! };
  }
  await insertReceipt(tx, receipt);
  await recordAudit(tx, { ...source, action: "player.erase", target: `player:${playerId}`, changes: { receipt: receipt.id, ...receipt.removed } });
  await recordEvent(tx, PLAYER_ERASED_EVENT, { id: playerId, erasure: receipt.id, erasedAt: receipt.erasedAt });
  if (options.ledger) await appendToLedger(options.ledger, receipt);
  return { kind: "erased", receipt };
}
