import type { Request, Response } from "express";
import type { Config } from "../core/config.js";
import { errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { taken } from "../core/send.js";
import type { ListSnapshot, ReadClient } from "../db/client.js";
import { ALL_ROWS, type Batch, type BatchQuery, type ListSource, readBatch, rowsAfter, type SnapshotFacts, writtenSince } from "../db/list-query.js";
import { Prisma } from "../generated/prisma/client.js";
import {
  checkSeal,
  encodeCursor,
  encodeSyncToken,
  isSuperseded,
  type ListQuery,
  MAX_RUNNING,
  NOT_A_CURSOR,
  NOT_A_SYNC_TOKEN,
  type Seal,
  type SyncPoint,
} from "./list-params.js";
import { nextLink } from "./next-link.js";

/**
 * Rows of a streamed list's first batch; each next batch aims at BATCH_BYTES of JSON, its rows sized from
 * the batch before (50 to 2,000). Under V8's large-object threshold (128 KB), a batch's strings die young:
 * four whole lists of a million players at once peaked at 165 MB instead of 204 (bench/results.md). A list
 * in progress holds at most two batches, the one being written and the next being read.
 */
export const LIST_BATCH_ROWS = 400;
const BATCH_BYTES = 120_000;
const nextBatchRows = (json: string, rows: number) => Math.min(2000, Math.max(50, Math.floor((BATCH_BYTES * rows) / Math.max(1, json.length))));

/** Whether the request's query asks for one page (bounded: no heavy-list slot needed). */
export const isPage = (query: unknown): boolean => (query as ListQuery | undefined)?.limit !== undefined;

/** What a list is read with: the reader client and the time (a route's ReadContext is one). */
export interface ListContext {
  db: ReadClient;
  now: () => Date;
}

/** What a list route's handler answers (http/route.ts makes it): the list to send, streamed by sendList. */
export class StreamedList {
  constructor(
    readonly list: { source: ListSource; joinedSince?: ((since: Date, now: Date) => Prisma.Sql) | undefined },
    /** The list's query as validated: limit, cursor, since (and the route's own parameters). */
    readonly query: ListQuery,
    readonly ctx: ListContext,
    /** The rows of the list, over the table aliased `t` (the route's filter, bound to its input); every row when absent. */
    readonly where?: () => Prisma.Sql,
  ) {}
}

/** What sending a list needs of the service: the heavy-list deadline, and where a failure after the first byte is logged. */
export interface ListDeps {
  config: Pick<Config, "heavyListDeadlineMs">;
  logger: Logger;
}

/**
 * Sends a list route's answer (docs/CALLING.md, "Large lists"): the whole list in batches written as the
 * client takes them (`heavy` on PostgreSQL: one snapshot read through a cursor; otherwise keyset batches,
 * each row as its batch read it), a page with its Link, or a sync (the rows written since the token).
 * Every answer carries a Sync-Token: the transactions its first snapshot did not see, whose rows the next
 * sync sends (at least once, never missed), and the table's count of deleting statements (another: 410).
 */
export async function sendList(answer: StreamedList, etag: string | undefined, req: Request, res: Response, deps: ListDeps, heavy: boolean): Promise<void> {
  const { list, query: query0, ctx } = answer;
  // A token or cursor of the unsealed format (before 2026-11-25): told once to start again, and the answer carries a sealed one.
  if (isSuperseded(query0.since)) throw errors.syncTokenExpired("this token was given before tokens were bound to their database");
  if (isSuperseded(query0.cursor)) throw errors.cursorExpired("this cursor was given before cursors were bound to their database");
  const { limit } = query0;
  const since = query0.since?.value;
  const cursor = query0.cursor?.value;
  const now = ctx.now();
  const where = since
    ? Prisma.sql`${writtenSince(since.from, since.running)}${list.joinedSince ? Prisma.sql` OR (${list.joinedSince(new Date(since.at), now)})` : Prisma.empty}`
    : (answer.where?.() ?? ALL_ROWS);
  const query: BatchQuery = { source: list.source, where, after: cursor?.after ?? null, rows: limit ?? LIST_BATCH_ROWS };
  // A whole list under a heavy-list slot, on PostgreSQL: one snapshot, held until the list is read or its client is gone
  // (ReadClient.snapshot), and for HEAVY_LIST_DEADLINE_MS at most, as the slot.
  const snapshot = heavy ? await ctx.db.snapshot?.(deps.config.heavyListDeadlineMs) : undefined;
  if (snapshot && (res.destroyed || req.socket.destroyed)) snapshot.abandon();
  else if (snapshot) res.once("close", () => snapshot.abandon());
  let first: Batch & SnapshotFacts;
  try {
    first = await readBatch(snapshot?.db ?? ctx.db, query, true);
    if (!first.more) await snapshot?.end();
  } catch (error) {
    await snapshot?.end();
    // Its client left meanwhile: the read failed as its connection was closed (abandon), nobody is owed an answer.
    if (snapshot && res.destroyed) return;
    throw error;
  }
  const key = syncKey(first.key);
  // Judged under the key read with the batch, before anything is sent: nothing of the batch leaves for a token refused.
  try {
    if (query0.cursor) unsealed(query0.cursor.seal, key, "cursor");
    if (query0.since) {
      unsealed(query0.since.seal, key, "since");
      answerable(query0.since.value, first);
    }
  } catch (error) {
    await snapshot?.end();
    throw error;
  }
  const start: SyncPoint = cursor?.start ?? { ...resumeAfter(first), deletions: first.deletions, at: now.getTime() };
  if (etag !== undefined) res.setHeader("ETag", etag);
  res.setHeader("Sync-Token", encodeSyncToken(start, key));
  res.type("application/json; charset=utf-8").status(200);
  if (limit !== undefined && first.more) res.setHeader("Link", nextLink(req, nextPageQuery(req, encodeCursor({ after: first.last!, start }, key))));
  if (limit !== undefined || !first.more) {
    res.send(`[${first.json}]`);
    return;
  }
  const rest = { ...query, after: first.last };
  await stream(res, `[${first.json}`, nextBatchRows(first.json, query.rows), snapshot ? cursorBatches(snapshot, rest) : keysetBatches(ctx.db, rest), (error) =>
    deps.logger.error({ err: error, method: req.method, path: req.path }, "list failed after its first byte: connection cut, the client sees a broken body"),
  );
}

/**
 * The next batch as written after what came before it: a comma before each
 * row (so "" when it has none). A cursor's batch (whole lists on PostgreSQL)
 * is built so by one join, not by prefixing it: a prefixed string is a rope
 * that the socket's write copies flat again, one more ~120 KB string a batch
 * for the collector. A keyset batch (PGlite, or no connection free for a
 * snapshot) comes from PostgreSQL as one text and is prefixed.
 */
type ReadNext = (rows: number) => Promise<{ json: string; more: boolean }>;

/** The rest of the list in keyset batches, each one statement on the pool: `rows` each, after the last key read. */
function keysetBatches(db: ReadClient, rest: BatchQuery): ReadNext {
  let after = rest.after;
  return async (rows) => {
    const batch = await readBatch(db, { ...rest, after, rows });
    after = batch.last;
    return { json: batch.json === "" ? "" : `,${batch.json}`, more: batch.more };
  };
}

/**
 * The rest of the list as one statement in the snapshot of its first batch,
 * `rows` at a time through a cursor; the connection goes back to the pool
 * with the last batch read, before the client has taken it.
 */
function cursorBatches(snapshot: ListSnapshot, rest: BatchQuery): ReadNext {
  const rows = snapshot.cursor(rowsAfter(rest));
  return async (count) => {
    const read = await rows.read(count);
    const more = read.length === count;
    if (!more) await snapshot.end();
    read.unshift("");
    return { json: read.join(","), more };
  };
}

function syncKey(hex: string | null): Buffer {
  // The migration stores one identity row; without it no token can be sealed or judged.
  if (!hex) throw new Error("sync_identity holds no row: the database's sync key is missing (re-run the migrations)");
  return Buffer.from(hex, "hex");
}

/**
 * A token or cursor sealed by another database (or by this one before it was
 * restored: the key is bound to the identity table's oid, which a restore
 * renews) is a 410: the client's cache is not this database's. One whose MAC
 * does not match was altered: a 400, as for any text the service did not give.
 */
function unsealed(seal: Seal, key: Buffer, parameter: "since" | "cursor"): void {
  const verdict = checkSeal(seal, key);
  if (verdict === "valid") return;
  if (verdict === "altered") throw errors.validation(`${parameter}: ${parameter === "since" ? NOT_A_SYNC_TOKEN : NOT_A_CURSOR}`);
  const reason = "this token is not from this database (another database, or this one restored from a backup since)";
  throw parameter === "since" ? errors.syncTokenExpired(reason) : errors.cursorExpired(reason.replace("token", "cursor"));
}

/**
 * What a token names: the transactions still running and the snapshot's xmax.
 * Past MAX_RUNNING of them (on a busy shared server), only the oldest, as a
 * floor: a shorter token, at the price of resending rows written since it.
 */
function resumeAfter(snapshot: { xmin: string; xmax: string; running: string[] }): Pick<SyncPoint, "from" | "running"> {
  return snapshot.running.length <= MAX_RUNNING ? { from: snapshot.xmax, running: snapshot.running } : { from: snapshot.xmin, running: [] };
}

/**
 * 410 for a token from before a deletion (its client may hold a row that is
 * gone), or naming transactions this database has not reached (a physical
 * backup restored: its sealing key is the same, its transaction ids went back).
 */
function answerable(since: SyncPoint, snapshot: { xmax: string; deletions: string }): void {
  const deletions = BigInt(snapshot.deletions);
  if (BigInt(since.from) > BigInt(snapshot.xmax) || BigInt(since.deletions) > deletions) throw errors.syncTokenExpired("this token is not from this database");
  if (BigInt(since.deletions) < deletions) throw errors.syncTokenExpired("rows of this list were deleted after this token was given");
}

/** The next page: this route (a reference relative to the request's URL, RFC 3986) with the same parameters and the new cursor. */
function nextPageQuery(req: Request, cursor: string): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(req.query as Record<string, string>)) if (name !== "cursor") params.set(name, value);
  params.set("cursor", cursor);
  return params.toString();
}

/**
 * Writes the first chunk, then batch after batch while the client takes them.
 * A failure after the first byte cannot change the status: the connection is
 * destroyed before the chunked body is terminated, so that no client takes
 * the truncated array for a whole one, and it is logged.
 */
async function stream(res: Response, head: string, rows: number, read: ReadNext, logFailure: (error: unknown) => void): Promise<void> {
  let reading = read(rows);
  try {
    res.write(head);
    for (;;) {
      // Read ahead while the client takes what was written; a client gone meanwhile leaves the read to finish unused.
      reading.catch(() => undefined);
      await taken(res);
      if (res.destroyed) return;
      const batch = await reading;
      if (batch.json !== "") res.write(batch.json);
      if (!batch.more) break;
      rows = nextBatchRows(batch.json, rows);
      reading = read(rows);
    }
    res.end("]");
  } catch (error) {
    logFailure(error);
    res.destroy();
  }
}
