import type { ConstraintViolation } from "./prisma-errors.js";

/**
 * The unique constraints of the schema, by name: what they protect, so that
 * a 409 can say which value collided and under which constraint. PostgreSQL's
 * own detail (`Key (name)=(Halo)`) does not survive Prisma's driver adapters.
 */
const UNIQUE_CONSTRAINTS: Record<string, { subject: string; fields: string[]; caseInsensitive?: boolean; taken?: string }> = {
  api_users_username_key: { subject: "Username", fields: ["username"], caseInsensitive: true },
  players_pseudo_key: { subject: "Pseudo", fields: ["pseudo"], caseInsensitive: true },
  players_nickname_key: { subject: "Nickname", fields: ["nickname"], caseInsensitive: true },
  cosmetics_name_key: { subject: "Cosmetic name", fields: ["name"] },
  reward_logs_player_reward_time_key: {
    subject: "Reward log",
    fields: ["playerId", "rewardId", "rewardedAt"],
    taken: "is already recorded",
  },
};

function show(value: unknown): string {
  if (value instanceof Date) return `${value.toISOString().slice(0, 19)}Z`;
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
      fields.length === 1 ? show(values[0]) : `(${fields.map((f, i) => `${f} ${show(values[i])}`).join(", ")})`;
    return `${known.subject} ${value} ${known.taken ?? "is already used"} (${constraint})`;
  }
  const on = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
  return `Conflict with existing data${on} (${constraint})`;
}
