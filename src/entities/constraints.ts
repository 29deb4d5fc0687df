import { type ConstraintViolation, uniqueViolation } from "../db/prisma-errors.js";
import type { UniqueConstraint } from "../fields/entity.js";
import { formatTimestamp } from "../fields/timestamp.js";
import { Prisma } from "../generated/prisma/client.js";
import { ENTITIES } from "./all.js";

/**
 * The unique constraints of the schema, by name: what they protect, so that
 * a 409 can say which value collided and under which constraint. PostgreSQL's
 * own detail (`Key (name)=(Halo)`) does not survive Prisma's driver adapters.
 * The entities' fields declare theirs; API users are no entity of the API.
 */
const UNIQUE_CONSTRAINTS = new Map<string, UniqueConstraint>(
  [
    { constraint: "api_users_username_key", table: "api_users", columns: ["username"], caseInsensitive: true, subject: "Username" },
    ...ENTITIES.flatMap((e) => e.unique),
  ].map((c) => [c.constraint, c]),
);

function quoteValue(value: unknown): string {
  if (value instanceof Date) return formatTimestamp(value);
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value);
}

/**
 * The message of a 409 for a unique violation: the value (taken from what the
 * client sent, when given) and the constraint.
 */
export function conflictMessage(violation: ConstraintViolation, input?: Record<string, unknown>): string {
  const name = violation.constraint ?? "unknown";
  const known = violation.constraint ? UNIQUE_CONSTRAINTS.get(violation.constraint) : undefined;
  const fields = known?.columns ?? violation.fields;
  const constraint = `unique constraint ${name}${known?.caseInsensitive ? ", case-insensitive" : ""}`;
  const values = fields.map((f) => input?.[f]);
  if (known && values.every((v) => v !== undefined)) {
    const value = fields.length === 1 ? quoteValue(values[0]) : `(${fields.map((f, i) => `${f} ${quoteValue(values[i])}`).join(", ")})`;
    return `${known.subject} ${value} ${known.taken ?? "is already used"} (${constraint})`;
  }
  const on = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
  return `Conflict with existing data${on} (${constraint})`;
}

/** The primary keys the database hands out (an id sequence): `<table>_pkey` → the table and its key column. */
const GENERATED_KEYS = new Map(ENTITIES.filter((e) => e.generatedKey).map((e) => [`${e.table}_pkey`, { table: e.table, key: e.primaryKey }]));

/**
 * A unique violation on a key the sequence handed out: the id was already
 * taken by a row written past the sequence (by hand, or by an insert that
 * drew its id before an import moved the sequence on). Not the client's
 * conflict: the write is retried with a fresh id (http/write.ts), never
 * answered 409 ("already recorded" would make a client drop a write that was
 * never stored).
 */
export function generatedKeyCollision(error: unknown): { table: string; key: string } | undefined {
  const violation = uniqueViolation(error);
  return violation?.constraint === undefined ? undefined : GENERATED_KEYS.get(violation.constraint);
}

/**
 * Moves a table's id sequence to `atLeast` when it is behind, never back:
 * ids the sequence handed out to inserts not yet committed (invisible to any
 * MAX(id)) stay behind it. setval is not transactional: it holds even if the
 * caller's transaction rolls back (a gap in the ids, nothing more).
 */
export function advanceIdSequence(table: string, key: string, atLeast: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT setval(x.s, x.m) FROM (SELECT pg_get_serial_sequence(${`"${table}"`}, ${key})::regclass AS s, (${atLeast})::bigint AS m) x
     WHERE x.m IS NOT NULL AND x.m > coalesce(pg_sequence_last_value(x.s), 0)`;
}

/** The largest id a table holds (committed, or written by the caller's own transaction). */
export const largestId = (table: string, key: string) => Prisma.sql`SELECT max(${Prisma.raw(`"${key}"`)}) FROM ${Prisma.raw(`"${table}"`)}`;
