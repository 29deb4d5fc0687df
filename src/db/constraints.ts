import { formatTimestamp } from "../fields/timestamp.js";
import type { UniqueConstraint } from "../fields/entity.js";
import { ENTITIES } from "../resources/entities.js";
import type { ConstraintViolation } from "./prisma-errors.js";

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
    const value =
      fields.length === 1 ? quoteValue(values[0]) : `(${fields.map((f, i) => `${f} ${quoteValue(values[i])}`).join(", ")})`;
    return `${known.subject} ${value} ${known.taken ?? "is already used"} (${constraint})`;
  }
  const on = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
  return `Conflict with existing data${on} (${constraint})`;
}
