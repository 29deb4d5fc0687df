import { z } from "zod";
import { type AuditSource, OPERATOR, recordAudit } from "../audit/audit.js";
import { AddressAllowList } from "../auth/address-allow-list.js";
import type { Caller } from "../auth/caller.js";
import { type KeyCache, RefusedKeys } from "../auth/key-cache.js";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../core/api-keys.js";
import { errors } from "../core/errors.js";
import type { DbClient } from "../db/client.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import { conflictMessage } from "../entities/constraints.js";
import { recordEvent } from "../events/record.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { auditUpdate, lockedForUpdate } from "./audited-update.js";
import { DEFAULT_GRACE_SECONDS } from "./grace.js";
import type { KeyUsage } from "./key-usage.js";

/** A username as it may exist: what the routes that address a user take. */
export const existingUsernameSchema = z
  .string()
  .min(3, "expected 3 to 32 characters")
  .max(32, "expected 3 to 32 characters")
  .regex(/^[A-Za-z0-9_.-]+$/, "expected only letters, digits, '_', '-' and '.'");

/**
 * The rule for a new username, shared by POST /inscription and the operator CLI (user create): a
 * leading '-' is refused, as a command line would read the name as an option (users created before
 * the rule are still addressed, by existingUsernameSchema, and in the CLI after `--`).
 */
export const usernameSchema = existingUsernameSchema.refine(
  (name) => !name.startsWith("-"),
  "must not begin with '-' (a command line would read it as an option)",
);

export const roleSchema = z
  .string()
  .min(1, "expected 1 to 32 characters")
  .max(32, "expected 1 to 32 characters")
  .regex(/^[A-Z_]+$/, "expected only capital letters and '_'");

export const DEFAULT_ROLE = "USER";

export interface ApiUserSummary {
  username: string;
  role: string;
  keyHint: string;
  createdAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  /** Comma-separated CIDRs the key may be used from; null: anywhere. */
  allowedIps: string | null;
  /** When the current key last authenticated, to the minute (written up to KEY_USAGE_FLUSH_MS late). */
  keyLastUsedAt: Date | null;
  /** The key replaced by the last rotation, while its grace period lasts (see pendingRotation). */
  previousKeyHint: string | null;
  previousKeyExpiresAt: Date | null;
  previousKeyLastUsedAt: Date | null;
}

const summary = {
  username: true,
  role: true,
  keyHint: true,
  createdAt: true,
  rotatedAt: true,
  revokedAt: true,
  allowedIps: true,
  keyLastUsedAt: true,
  previousKeyHint: true,
  previousKeyExpiresAt: true,
  previousKeyLastUsedAt: true,
} as const;

/** The channel on which revocations and rotations are announced to every instance. */
export const USER_CHANGED_CHANNEL = "api_user_changed";

export class ApiUsers {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly cache?: KeyCache,
    private readonly refused = new RefusedKeys(),
    /** Where each key's last use is noted; without it, last use is not recorded. */
    private readonly usage?: KeyUsage,
  ) {}

  /** Runs `work` in `db` when given (the transaction of an API request), else in a transaction of its own. */
  private inTransaction<T>(db: DbClient | undefined, work: (tx: DbClient) => Promise<T>): Promise<T> {
    return db ? work(db) : this.prisma.$transaction(work);
  }

  /**
   * Registers a user; the returned key is the only copy that will ever exist.
   * Runs in `db` when given (the transaction of an API request), else in a
   * transaction of its own; the audit entry is written in the same one.
   */
  async create(username: string, role: string = DEFAULT_ROLE, by: AuditSource = OPERATOR, db?: DbClient): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    const run = async (tx: DbClient) => {
      const user = await tx.apiUser.create({
        data: { username, role, keyHash: key.hash, keyHint: key.hint },
        select: summary,
      });
      await recordAudit(tx, { ...by, action: "api_user.register", target: `api_user:${user.username}`, changes: { username, role } });
      // As POST /inscription answers it, without the key.
      await recordEvent(tx, "api_user.created", { username: user.username, role: user.role });
      return { user, apiKey: key.key };
    };
    try {
      return db ? await run(db) : await this.prisma.$transaction(run);
    } catch (error) {
      const violation = uniqueViolation(error);
      if (violation) throw errors.duplicate(conflictMessage(violation, { username }));
      throw error;
    }
  }

  list(): Promise<ApiUserSummary[]> {
    return this.prisma.apiUser.findMany({ select: summary, orderBy: { id: "asc" } });
  }

  count(): Promise<number> {
    return this.prisma.apiUser.count();
  }

  /**
   * The user a key belongs to, or undefined when the key is unknown, revoked,
   * or rotated away and past its grace period. A key in its grace period is
   * cached only until its expiry, so it stops at that moment on every instance.
   */
  async authenticate(key: string): Promise<Caller | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const keyHash = hashApiKey(key);
    const cached = this.cache?.get(keyHash);
    if (cached) {
      this.usage?.record(keyHash);
      return cached;
    }
    if (this.refused.has(keyHash)) return undefined;
    // Noted before the lookup: a revocation announced while it runs keeps its answer out of the cache.
    const version = this.cache?.version ?? 0;
    const now = new Date();
    const user = await this.prisma.apiUser.findFirst({
      where: { OR: [{ keyHash }, { previousKeyHash: keyHash, previousKeyExpiresAt: { gt: now } }] },
      select: { id: true, username: true, role: true, revokedAt: true, allowedIps: true, keyHash: true, previousKeyExpiresAt: true },
    });
    if (!user || user.revokedAt !== null) {
      this.refused.add(keyHash);
      return undefined;
    }
    const caller: Caller = { id: user.id, username: user.username, role: user.role };
    if (user.allowedIps !== null) caller.allowedAddresses = AddressAllowList.parse(user.allowedIps).list ?? AddressAllowList.nowhere();
    this.cache?.set(keyHash, caller, user.keyHash === keyHash ? undefined : user.previousKeyExpiresAt!.getTime(), version);
    this.usage?.record(keyHash);
    return caller;
  }

  /** The user of a key this instance has already checked and holds in memory; never a database lookup. */
  authenticateFromMemory(key: string): Caller | undefined {
    if (!looksLikeApiKey(key)) return undefined;
    const keyHash = hashApiKey(key);
    const caller = this.cache?.get(keyHash);
    if (caller) this.usage?.record(keyHash);
    return caller;
  }

  /** Revokes all of the user's keys (a previous one in its grace period too) at once, on every instance. The username stays taken. */
  async revoke(username: string, by: AuditSource = OPERATOR, db?: DbClient): Promise<ApiUserSummary> {
    return this.inTransaction(db, async (tx) => {
      const before = await lockedForUpdate(tx, username);
      const revokedAt = new Date();
      const { count } = await tx.apiUser.updateMany({
        where: { username, revokedAt: null },
        data: { revokedAt, previousKeyHash: null, previousKeyHint: null, previousKeyExpiresAt: null, previousKeyLastUsedAt: null },
      });
      const user = await tx.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
      if (count === 0) throw errors.conflict(`API user '${user.username}' is already revoked`);
      await auditUpdate(tx, by, "api_user.revoke", user, before, ["revokedAt"]);
      await this.announce(tx, username);
      return user;
    });
  }

  /** Tells every instance (on commit) to drop this user's cached keys; this one at once. */
  private async announce(tx: DbClient, username: string): Promise<void> {
    this.cache?.forgetUser(username);
    await tx.$executeRaw`SELECT pg_notify(${USER_CHANGED_CHANNEL}, lower(${username}))`;
  }

  /**
   * Restricts where the user's key may be used from (null: anywhere again).
   * Every instance drops the user's cached keys, so the change holds at once.
   */
  async setAllowedAddresses(username: string, list: AddressAllowList | null, by: AuditSource = OPERATOR, db?: DbClient): Promise<ApiUserSummary> {
    return this.inTransaction(db, async (tx) => {
      const allowedIps = list?.toString() ?? null;
      const before = await lockedForUpdate(tx, username);
      const user = await tx.apiUser.update({ where: { username }, data: { allowedIps }, select: summary });
      await auditUpdate(tx, by, "api_user.allow_ip", user, before, ["allowedIps"]);
      await this.announce(tx, username);
      return user;
    });
  }

  /**
   * Issues a new key. The old one keeps working for `graceSeconds` (0: it
   * stops at once), so that its holder can switch without downtime; a key
   * replaced earlier and still in its grace period stops at once (at most two
   * keys work). A revoked user is reinstated, with its old key dead at once.
   * Every instance drops the user's cached keys. The audit entry says what
   * changed, never the key, its hash or its hint.
   */
  async rotate(
    username: string,
    by: AuditSource = OPERATOR,
    graceSeconds = DEFAULT_GRACE_SECONDS,
    db?: DbClient,
  ): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    return this.inTransaction(db, async (tx) => {
      const before = await lockedForUpdate(tx, username);
      const rotatedAt = new Date();
      const expiresAt = new Date(rotatedAt.getTime() + graceSeconds * 1000);
      const keep = Prisma.sql`(${graceSeconds}::int > 0 AND "revokedAt" IS NULL)`;
      // The right-hand sides read the row as it was: the current key becomes the previous one.
      await tx.$executeRaw`
        UPDATE api_users SET
          "previousKeyHash" = CASE WHEN ${keep} THEN "keyHash" END,
          "previousKeyHint" = CASE WHEN ${keep} THEN "keyHint" END,
          "previousKeyExpiresAt" = CASE WHEN ${keep} THEN ${expiresAt}::timestamptz END,
          "previousKeyLastUsedAt" = CASE WHEN ${keep} THEN "keyLastUsedAt" END,
          "keyHash" = ${key.hash}, "keyHint" = ${key.hint}, "keyLastUsedAt" = NULL,
          "rotatedAt" = ${rotatedAt}::timestamptz, "revokedAt" = NULL
        WHERE username = ${username}::citext`;
      const user = await tx.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
      // The key is named, never shown, and has no before: what it replaced is key material.
      await auditUpdate(tx, by, "api_user.rotate", user, before, ["rotatedAt", "revokedAt", "previousKeyExpiresAt"], { key: "replaced" });
      await this.announce(tx, username);
      return { user, apiKey: key.key };
    });
  }
}
