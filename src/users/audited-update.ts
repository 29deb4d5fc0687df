import { type AuditAction, type AuditSource, recordAudit } from "../audit/audit.js";
import { errors } from "../core/errors.js";
import type { DbClient } from "../db/client.js";

/** The fields of an API user that its updates change and their audit entries show, before and after: never key material. */
interface AuditedUserFields {
  rotatedAt: Date | null;
  revokedAt: Date | null;
  previousKeyExpiresAt: Date | null;
  allowedIps: string | null;
}

/**
 * The user's audited fields as they are now, the row locked until the
 * transaction ends: what an update made next in it replaces.
 */
export async function lockedForUpdate(tx: DbClient, username: string): Promise<AuditedUserFields> {
  const [row] = await tx.$queryRaw<AuditedUserFields[]>`
    SELECT "rotatedAt", "revokedAt", "previousKeyExpiresAt", "allowedIps" FROM api_users WHERE username = ${username}::citext FOR UPDATE`;
  if (!row) throw errors.notFound(`API user '${username}'`);
  return row;
}

/**
 * The audit entry of an update of `user` (read back after it): `fields` as
 * stored now, after the names in `also` (`changes`), and as they were
 * (`before`, from lockedForUpdate): the same format on both sides.
 */
export function auditUpdate(
  tx: DbClient,
  by: AuditSource,
  action: AuditAction,
  user: AuditedUserFields & { username: string },
  before: AuditedUserFields,
  fields: (keyof AuditedUserFields)[],
  also: Record<string, unknown> = {},
): Promise<void> {
  const of = (row: AuditedUserFields) => Object.fromEntries(fields.map((name) => [name, row[name]]));
  return recordAudit(tx, { ...by, action, target: `api_user:${user.username}`, changes: { ...also, ...of(user) }, before: of(before) });
}
