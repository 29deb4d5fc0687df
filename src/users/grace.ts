import { z } from "zod";

/** How long a rotated-away key keeps working unless told otherwise: 24 hours. */
export const DEFAULT_GRACE_SECONDS = 86_400;
/** The longest grace period: 30 days. A key that must stay longer is not being rotated. */
export const MAX_GRACE_SECONDS = 30 * 86_400;

const GRACE_RULE = `expected a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (30 days)`;

/** A grace period in whole seconds, as the CLI (`--grace`) and the admin API take it. */
export const graceSecondsSchema = z.number(GRACE_RULE).int(GRACE_RULE).min(0, GRACE_RULE).max(MAX_GRACE_SECONDS, GRACE_RULE);

/** What a listing knows of a user's previous key (ApiUserSummary). */
interface PreviousKey {
  revokedAt: Date | null;
  previousKeyHint: string | null;
  previousKeyExpiresAt: Date | null;
  previousKeyLastUsedAt: Date | null;
}

export interface PendingRotation {
  keyHint: string;
  expiresAt: Date;
  lastUsedAt: Date | null;
}

/** The previous key while it still works (its grace period not over, the user not revoked), else null. */
export function pendingRotation(user: PreviousKey, now: Date): PendingRotation | null {
  const { previousKeyHint, previousKeyExpiresAt, revokedAt } = user;
  if (revokedAt || !previousKeyHint || !previousKeyExpiresAt || previousKeyExpiresAt <= now) return null;
  return { keyHint: previousKeyHint, expiresAt: previousKeyExpiresAt, lastUsedAt: user.previousKeyLastUsedAt };
}
