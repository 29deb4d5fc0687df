import { createHash } from "node:crypto";
import type { Request } from "express";
import { maskKeys } from "../core/api-keys.js";
import { ApiError, errors } from "../core/errors.js";
import type { DbClient } from "../db/client.js";
import type { RouteSpec } from "./route.js";

/**
 * Idempotency-Key (Stripe's semantics, per API user, kept IDEMPOTENCY_RETAIN_HOURS; docs/CALLING.md,
 * "Retrying a POST safely"). The key's row is inserted first, so a concurrent duplicate waits for the
 * first to commit and replays its answer. The handler runs under a savepoint: a 404 or 409 is stored and
 * replayed; a 400 or a 5xx stores nothing (a retry may succeed). Another body or route with the key: 422.
 */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** Printable ASCII, 1 to 255 characters (UUIDs, "order-42:attempt"…). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/** What a write answers, as sent and as an Idempotency-Key replay sends it again. */
export interface Answer {
  status: number;
  /** The exact JSON text sent: a replay sends the same bytes. */
  text: string;
  /** Of the record written, when the handler gives it (not kept for replays). */
  etag?: string | undefined;
  /** A failure's kind (the Error-Name header), kept for replays. */
  error?: string | undefined;
  replayed?: boolean;
}

/** What a write handler gave: its answer's body, and the version of the record written. */
export interface Written {
  body: unknown;
  etag?: string;
}

export interface KeyedRequest {
  userId: number;
  key: string;
  route: string;
  fingerprint: string;
  now: Date;
  /** IDEMPOTENCY_RETAIN_HOURS, in hours: an older key counts as new. */
  retainHours: number;
}

/** The header, checked: undefined when not sent; a 400 naming it when malformed or sent twice. */
export function idempotencyKey(req: Request): string | undefined {
  const values = req.headersDistinct["idempotency-key"];
  if (values === undefined) return undefined;
  if (values.length !== 1) throw errors.validation(`${IDEMPOTENCY_HEADER}: send it once`);
  const value = values[0]!;
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw errors.validation(`${IDEMPOTENCY_HEADER}: expected 1 to 255 printable ASCII characters`);
  }
  // Kept in clear for IDEMPOTENCY_RETAIN_HOURS, and an API key is never kept in clear (as for X-Request-Id): refused.
  if (maskKeys(value) !== value) {
    throw errors.validation(`${IDEMPOTENCY_HEADER}: holds an API key (gsk_…); send a random value such as a UUID, and rotate the key it holds`);
  }
  return value;
}

/** The same request means the same method, path and JSON body, whatever its key order and spacing. */
export function fingerprint(route: RouteSpec, body: unknown): string {
  return createHash("sha256")
    .update(`${route.method} ${route.path}\n${canonicalJson(body)}`)
    .digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Takes the key for this request (a new row, or one older than `retainHours`, which
 * counts as new) and returns undefined; or returns the answer stored for it.
 * A concurrent holder of the key makes the INSERT wait until it commits (its
 * answer is then read) or rolls back (the key is then taken here).
 */
export async function claimKey(tx: DbClient, r: KeyedRequest): Promise<Answer | undefined> {
  const expired = new Date(r.now.getTime() - r.retainHours * 3_600_000);
  // A row purged between the two statements makes the loop take the key again.
  for (;;) {
    const claimed = await tx.$executeRaw`
      INSERT INTO idempotency_keys ("apiUserId", key, route, fingerprint, "createdAt")
      VALUES (${r.userId}, ${r.key}, ${r.route}, ${r.fingerprint}, ${r.now})
      ON CONFLICT ("apiUserId", key) DO UPDATE
        SET route = EXCLUDED.route, fingerprint = EXCLUDED.fingerprint, "createdAt" = EXCLUDED."createdAt",
            "responseStatus" = NULL, "responseBody" = NULL, "responseError" = NULL
        WHERE idempotency_keys."createdAt" <= ${expired}`;
    if (claimed === 1) return undefined;
    const rows = await tx.$queryRaw<{ route: string; fingerprint: string; status: number | null; body: string | null; error: string | null }[]>`
      SELECT route, fingerprint, "responseStatus" AS status, "responseBody" AS body, "responseError" AS error
        FROM idempotency_keys WHERE "apiUserId" = ${r.userId} AND key = ${r.key}`;
    const stored = rows[0];
    if (!stored) continue;
    if (stored.fingerprint !== r.fingerprint) throw errors.idempotencyKeyReused(stored.route, stored.route === r.route, r.retainHours);
    if (stored.status === null || stored.body === null) throw new Error("An idempotency key was committed without its answer");
    return { status: stored.status, text: stored.body, error: stored.error ?? undefined };
  }
}

/**
 * Failures that are this request's answer, kept and replayed like a success: a
 * 4xx other than 400 (the record is missing, or conflicts with another).
 */
const isStoredFailure = (error: unknown): error is ApiError => error instanceof ApiError && error.status > 400 && error.status < 500;

export async function runOnce(tx: DbClient, r: KeyedRequest, route: RouteSpec, success: number, handler: () => Promise<Written>): Promise<Answer> {
  await tx.$executeRawUnsafe("SAVEPOINT idempotent_write");
  let answer: Answer;
  let replay: Answer;
  try {
    const { body, etag } = await handler();
    answer = { status: success, text: JSON.stringify(body) };
    // An answer holding a secret (a new API key) is not kept: a replay says what happened instead.
    const instead = route.replayInstead?.(body);
    replay = instead ? { status: instead.status, text: JSON.stringify(instead.toBody()), error: instead.kind } : answer;
    if (etag) answer = { ...answer, etag };
  } catch (error) {
    if (!isStoredFailure(error)) throw error;
    await tx.$executeRawUnsafe("ROLLBACK TO SAVEPOINT idempotent_write");
    answer = replay = { status: error.status, text: JSON.stringify(error.toBody()), error: error.kind };
  }
  await tx.$executeRaw`
    UPDATE idempotency_keys SET "responseStatus" = ${replay.status}, "responseBody" = ${replay.text}, "responseError" = ${replay.error ?? null}
     WHERE "apiUserId" = ${r.userId} AND key = ${r.key}`;
  return answer;
}
