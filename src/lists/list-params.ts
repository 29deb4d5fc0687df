import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { queryInt } from "../fields/query-params.js";
import { INT32_MAX } from "../fields/rules.js";

/**
 * The query parameters every list route takes (docs/CALLING.md, "Large
 * lists"), and the two opaque values it hands out: the sync token (the
 * Sync-Token header, sent back as `since`) and the page cursor (in the Link
 * header's next URL). Both are versioned (`s2.`, `c2.`) and base64url inside,
 * so that their content can change without breaking a client that keeps them,
 * and sealed under the database's sync key (Seal): a token of another
 * database, or of this one before a restore, is told apart from one altered.
 */

export const MAX_PAGE_ROWS = 1000;

/**
 * Where a sync resumes: which transactions' writes the answer may not hold
 * (those of its snapshot still running, and any later one), the deletions it
 * saw, and the server's time then.
 */
export interface SyncPoint {
  /** A PostgreSQL transaction id (xid8), decimal: rows written by it or a later one are sent. */
  from: string;
  /** Transactions below `from` still running then (at most MAX_RUNNING): rows they wrote are sent too. */
  running: string[];
  /** How many statements had deleted rows of the list's table (decimal): a sync that sees more answers 410. */
  deletions: string;
  /** Milliseconds since the epoch: rows that join a list by time alone (active items) after it are sent too. */
  at: number;
}

/** Past this many transactions running at once, a token keeps only the oldest as its `from` (shorter, some rows resent). */
export const MAX_RUNNING = 64;

export interface Cursor {
  /** The key of the last row of the page before. */
  after: number;
  /** The sync point of the walk's first page: every page answers it, so the walk as a whole is covered. */
  start: SyncPoint;
}

/**
 * What binds a token or cursor to the database that gave it: the database's
 * tag, and a MAC over the whole text, both under the database's sync key
 * (db/list-query.ts, migration 20261125100000_sync_identity). Checked once
 * that key is read, with the list's first batch (lists/list.ts): a tag of
 * another database is a 410, a MAC that does not match a 400.
 */
export interface Seal {
  database: string;
  mac: string;
  /** The text the MAC covers: the token or cursor but its MAC. */
  signed: string;
}

/** A token or cursor as sent: what it says, and its seal. */
export interface Sealed<T> {
  value: T;
  seal: Seal;
}

/** A token or cursor of the format given before tokens were sealed (`s1.`, `c1.`): answered 410 once, then the client holds a sealed one. */
export interface Superseded {
  superseded: true;
}

export interface ListQuery {
  limit?: number;
  cursor?: Sealed<Cursor> | Superseded;
  since?: Sealed<SyncPoint> | Superseded;
}

export const isSuperseded = (value: Sealed<unknown> | Superseded | undefined): value is Superseded => value !== undefined && "superseded" in value;

const INT64_MAX = 2n ** 63n - 1n;
/** A transaction id or a count: decimal, and within PostgreSQL's bigint (a larger one would fail the query, not the token). */
const isBigint = (text: string | undefined) => text !== undefined && /^\d{1,19}$/.test(text) && BigInt(text) <= INT64_MAX;
const TIME = /^\d{1,15}$/;
const INT = /^\d{1,10}$/;

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");
const unb64 = (text: string) => (/^[A-Za-z0-9_-]{1,2000}$/.test(text) ? Buffer.from(text, "base64url").toString("utf8") : "");

/**
 * The database's sync key (32 bytes, read as hex from the database) and what
 * it gives: the database's tag (8 bytes) and a token's MAC (16 bytes), both
 * HMAC-SHA256, base64url.
 */
const hmac = (key: Buffer, text: string, bytes: number) => createHmac("sha256", key).update(text).digest().subarray(0, bytes).toString("base64url");
const DATABASE_TAG = /^[A-Za-z0-9_-]{11}$/;
const MAC = /^[A-Za-z0-9_-]{22}$/;
export const databaseTag = (key: Buffer) => hmac(key, "sync-database", 8);

function seal(prefix: string, body: string, key: Buffer): string {
  const signed = `${prefix}${b64(`${databaseTag(key)}:${body}`)}`;
  return `${signed}.${hmac(key, signed, 16)}`;
}

/** Whether the seal is this database's (tag) and intact (MAC, compared in constant time). */
export function checkSeal(s: Seal, key: Buffer): "valid" | "other-database" | "altered" {
  if (s.database !== databaseTag(key)) return "other-database";
  const expected = Buffer.from(hmac(key, s.signed, 16));
  const sent = Buffer.from(s.mac);
  return sent.length === expected.length && timingSafeEqual(sent, expected) ? "valid" : "altered";
}

/** `from:deletions:at:running`, each running transaction as its distance below `from` (a few digits). */
const syncPoint = (p: SyncPoint) => `${p.from}:${p.deletions}:${p.at}:${p.running.map((id) => (BigInt(p.from) - BigInt(id)).toString()).join(",")}`;
export const encodeSyncToken = (p: SyncPoint, key: Buffer) => seal("s2.", syncPoint(p), key);
export const encodeCursor = (c: Cursor, key: Buffer) => seal("c2.", `${c.after}:${syncPoint(c.start)}`, key);

/** The sync point's four parts, as split from a token or a cursor. */
function readSyncPoint([from, deletions, at, running, ...rest]: string[]): SyncPoint | undefined {
  if (rest.length > 0 || running === undefined || !isBigint(from) || !isBigint(deletions) || !TIME.test(at ?? "")) return undefined;
  const below = running === "" ? [] : running.split(",");
  if (below.length > MAX_RUNNING || !below.every((n) => isBigint(n) && BigInt(n) > 0n && BigInt(n) < BigInt(from!))) return undefined;
  return { from: from!, running: below.map((n) => (BigInt(from!) - BigInt(n)).toString()), deletions: deletions!, at: Number(at) };
}

/** A sealed text's parts after the database tag, and its seal; undefined when it is not one. */
function unseal(text: string, prefix: string): { parts: string[]; seal: Seal } | undefined {
  const dot = text.lastIndexOf(".");
  if (!text.startsWith(prefix) || dot <= prefix.length) return undefined;
  const mac = text.slice(dot + 1);
  const [database, ...parts] = unb64(text.slice(prefix.length, dot)).split(":");
  if (!MAC.test(mac) || !DATABASE_TAG.test(database ?? "")) return undefined;
  return { parts, seal: { database: database!, mac, signed: text.slice(0, dot) } };
}

function readCursor([after, ...start]: string[]): Cursor | undefined {
  const point = readSyncPoint(start);
  if (point === undefined || !INT.test(after ?? "") || Number(after) > INT32_MAX) return undefined;
  return { after: Number(after), start: point };
}

function decodeSyncToken(token: string): Sealed<SyncPoint> | Superseded | undefined {
  if (token.startsWith("s1.")) return readSyncPoint(unb64(token.slice(3)).split(":")) ? { superseded: true } : undefined;
  const sealed = unseal(token, "s2.");
  const value = sealed && readSyncPoint(sealed.parts);
  return value && { value, seal: sealed.seal };
}

function decodeCursor(cursor: string): Sealed<Cursor> | Superseded | undefined {
  if (cursor.startsWith("c1.")) return readCursor(unb64(cursor.slice(3)).split(":")) ? { superseded: true } : undefined;
  const sealed = unseal(cursor, "c2.");
  const value = sealed && readCursor(sealed.parts);
  return value && { value, seal: sealed.seal };
}

/** What a token and a cursor look like, for the OpenAPI document (under a key of zeros). */
const EXAMPLE_KEY = Buffer.alloc(32);
const EXAMPLE_POINT: SyncPoint = { from: "754", running: [], deletions: "0", at: 1764000000000 };
export const EXAMPLE_SYNC_TOKEN = encodeSyncToken(EXAMPLE_POINT, EXAMPLE_KEY);
export const EXAMPLE_CURSOR = encodeCursor({ after: 100, start: EXAMPLE_POINT }, EXAMPLE_KEY);

/** What a token or cursor the service did not give is told (a 400), whether garbled or altered. */
export const NOT_A_CURSOR = "not a cursor of this list: send the one from the Link header's next URL unchanged";
export const NOT_A_SYNC_TOKEN = "not a sync token: send the Sync-Token header of an earlier answer of this list unchanged";

const opaque = <T>(decode: (text: string) => T | undefined, message: string) =>
  z.string("expected a single value").transform((text, ctx) => {
    const decoded = decode(text);
    if (decoded === undefined) {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    }
    return decoded;
  });

export const LIST_QUERY = {
  limit: queryInt(z.int("expected an integer").min(1, "expected 1 to 1000").max(MAX_PAGE_ROWS, "expected 1 to 1000"))
    .optional()
    .meta({
      description:
        "Pages the list: at most this many rows (1 to 1000), in the list's order. While rows remain the answer has a " +
        'Link header whose rel="next" URL asks for the next page. Without it the whole list.',
      example: 100,
    }),
  cursor: opaque(decodeCursor, NOT_A_CURSOR)
    .optional()
    .meta({
      description:
        "Where the page starts: opaque, taken from the Link header's next URL (which also repeats limit and the other " +
        "parameters). Pages never skip nor repeat a row, even while rows are added.",
      example: EXAMPLE_CURSOR,
    }),
  since: opaque(decodeSyncToken, NOT_A_SYNC_TOKEN)
    .optional()
    .meta({
      description:
        "A Sync-Token from an earlier answer of this list: only the rows inserted or changed since are sent (upsert them " +
        "by key), with a new Sync-Token. A filtered list sends every changed row, matching the filter or not. 410 when " +
        "rows were deleted since, or the token is not from this database: take the full list again.",
      example: EXAMPLE_SYNC_TOKEN,
    }),
};

/** A cursor is only given with a limit: a page without one is the whole rest of the list. */
export function cursorNeedsLimit(query: ListQuery, ctx: z.RefinementCtx): void {
  if (query.cursor !== undefined && query.limit === undefined) {
    ctx.addIssue({ code: "custom", path: ["limit"], message: "required with cursor (send the Link header's next URL as it is)" });
  }
}
