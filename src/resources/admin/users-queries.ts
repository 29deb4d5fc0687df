import type { CallerDirectory } from "../../auth/callers.js";
import type { ReadClient } from "../../db/client.js";
import { formatTimestamp } from "../../fields/timestamp.js";
import { pendingRotation } from "../../users/grace.js";
import type { ApiUserSummary } from "../../users/users.js";

const time = (d: Date | null) => (d ? formatTimestamp(d) : null);

/** An API user as the admin routes show it: never its key or hash, only the key's hint. */
export function apiUserView(user: ApiUserSummary, callers: CallerDirectory, now: Date) {
  const pending = pendingRotation(user, now);
  return {
    username: user.username,
    role: user.role,
    groups: [...callers.groupsOf(user.username)].sort(),
    status: user.revokedAt ? ("revoked" as const) : ("active" as const),
    keyHint: user.keyHint,
    keyLastUsedAt: time(user.keyLastUsedAt),
    createdAt: formatTimestamp(user.createdAt),
    rotatedAt: time(user.rotatedAt),
    revokedAt: time(user.revokedAt),
    allowedAddresses: user.allowedIps === null ? null : user.allowedIps.split(","),
    pendingRotation: pending && { keyHint: pending.keyHint, expiresAt: formatTimestamp(pending.expiresAt), lastUsedAt: time(pending.lastUsedAt) },
  };
}

/** Every API user, oldest first (a read: raw SQL on the reader client). */
export function listApiUsers(db: ReadClient): Promise<ApiUserSummary[]> {
  return db.$queryRaw<ApiUserSummary[]>`
    SELECT username::text AS username, role, "keyHint", "createdAt", "rotatedAt", "revokedAt", "allowedIps",
           "keyLastUsedAt", "previousKeyHint", "previousKeyExpiresAt", "previousKeyLastUsedAt"
      FROM api_users
     ORDER BY id`;
}
