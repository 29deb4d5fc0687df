import { formatTimestamp } from "../fields/timestamp.js";
import type { ConstraintViolation } from "./prisma-errors.js";

/**
 * The unique constraints of the schema, by name: what they protect, so that
 * a 409 can say which value collided and under which constraint. PostgreSQL's
 * own detail (`Key (name)=(Halo)`) does not survive Prisma's driver adapters.
 */
export interface UniqueConstraint {
  table: string;
  subject: string;
  fields: string[];
  caseInsensitive: boolean;
  /** How the 409 says the value is taken. */
  taken?: string;
}

export const UNIQUE_CONSTRAINTS: Record<string, UniqueConstraint> = {
  api_users_username_key: { table: "api_users", subject: "Username", fields: ["username"], caseInsensitive: true },
  players_pseudo_key: { table: "players", subject: "Pseudo", fields: ["pseudo"], caseInsensitive: true },
  players_nickname_key: { table: "players", subject: "Nickname", fields: ["nickname"], caseInsensitive: true },
  cosmetics_name_key: { table: "cosmetics", subject: "Cosmetic name", fields: ["name"], caseInsensitive: false },
  reward_logs_player_reward_time_key: {
    table: "reward_logs",
    subject: "Reward log",
    fields: ["playerId", "rewardId", "rewardedAt"],
    caseInsensitive: false,
    taken: "is already recorded",
  },
};

/** The unique constraints of one table besides its primary key. */
export function uniqueConstraintsOf(table: string): { constraint: string; columns: string[]; caseInsensitive: boolean }[] {
  return Object.entries(UNIQUE_CONSTRAINTS)
    .filter(([, c]) => c.table === table)
    .map(([constraint, c]) => ({ constraint, columns: c.fields, caseInsensitive: c.caseInsensitive }));
}

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
  const known = violation.constraint ? UNIQUE_CONSTRAINTS[violation.constraint] : undefined;
  const fields = known?.fields ?? violation.fields;
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
