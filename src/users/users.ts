import { z } from "zod";
import { AddressAllowList } from "../auth/address-allow-list.js";
import { OPERATOR, recordAudit, type AuditSource } from "../audit/audit.js";
import type { Caller } from "../auth/caller.js";
import type { DbClient } from "../db/client.js";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../auth/api-keys.js";
import { conflictMessage } from "../db/constraints.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import { RefusedKeys, type KeyCache } from "../auth/key-cache.js";
import { errors } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/** The username and role rules, shared by POST /inscription and the operator CLI. */
export const usernameSchema = z
  .string()
  .min(3, "expected 3 to 32 characters")
  .max(32, "expected 3 to 32 characters")
  .regex(/^[A-Za-z0-9_.-]+$/, "expected only letters, digits, '_', '-' and '.'");

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
}

const summary = {
  username: true,
  role: true,
  keyHint: true,
  createdAt: true,
  rotatedAt: true,
  revokedAt: true,
  allowedIps: true,
} as const;

/** The channel on which revocations and rotations are announced to every instance. */
export const USER_CHANGED_CHANNEL = "api_user_changed";

export class ApiUsers {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly cache?: KeyCache,
    private readonly refused = new RefusedKeys(),
  ) {}

  /**
   * Registers a user; the returned key is the only copy that will ever exist.
   * Runs in `db` when given (the transaction of an API request), else in a
   * transaction of its own; the audit entry is written in the same one.
   */
  async create(
    username: string,
    role: string = DEFAULT_ROLE,
    by: AuditSource = OPERATOR,
    db?: DbClient,
  ): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    const run = async (tx: DbClient) => {
      const user = await tx.apiUser.create({
        data: { username, role, keyHash: key.hash, keyHint: key.hint },
        select: summary,
      });
      await recordAudit(tx, { ...by, action: "api_user.register", target: `api_user:${user.username}`, changes: { username, role } });
      return { user, apiKey: key.key };
    };
    try {
      return db ? await run(db) : await this.prisma.$transaction(run);
    } catch (error) {
      const violation = uniqueViolation(error);
      if (violation) throw errors.conflict(conflictMessage(violation, { username }));
      throw error;
    }
  }

  list(): Promise<ApiUserSummary[]> {
    return this.prisma.apiUser.findMany({ select: summary, orderBy: { id: "asc" } });
  }

  count(): Promise<number> {
    return this.prisma.apiUser.count();
  }

  /** The user a key belongs to, or undefined when the key is unknown or revoked. */
  async authenticate(key: string): Promise<Caller | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const keyHash = hashApiKey(key);
    const cached = this.cache?.get(keyHash);
    if (cached) return cached;
    if (this.refused.has(keyHash)) return undefined;
    const user = await this.prisma.apiUser.findUnique({
      where: { keyHash },
      select: { id: true, username: true, role: true, revokedAt: true, allowedIps: true },
    });
    if (!user || user.revokedAt !== null) {
      this.refused.add(keyHash);
      return undefined;
    }
    const caller: Caller = { id: user.id, username: user.username, role: user.role };
    if (user.allowedIps !== null) caller.allowedAddresses = AddressAllowList.parse(user.allowedIps).list ?? AddressAllowList.nowhere();
    this.cache?.set(keyHash, caller);
    return caller;
  }

  /** The user of a key this instance has already checked and holds in memory; never a database lookup. */
  authenticateFromMemory(key: string): Caller | undefined {
    return looksLikeApiKey(key) ? this.cache?.get(hashApiKey(key)) : undefined;
  }

  /** Revokes the user's key at once, on every instance. The username stays taken. */
  async revoke(username: string, by: AuditSource = OPERATOR): Promise<ApiUserSummary> {
    return this.prisma.$transaction(async (tx) => {
      const revokedAt = new Date();
      const { count } = await tx.apiUser.updateMany({ where: { username, revokedAt: null }, data: { revokedAt } });
      const user = await tx.apiUser.findUnique({ where: { username }, select: summary });
      if (!user) throw errors.notFound("API user");
      if (count === 0) throw errors.conflict(`API user '${user.username}' is already revoked`);
      await recordAudit(tx, { ...by, action: "api_user.revoke", target: `api_user:${user.username}`, changes: { revokedAt } });
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
  async setAllowedAddresses(username: string, list: AddressAllowList | null, by: AuditSource = OPERATOR): Promise<ApiUserSummary> {
    return this.prisma.$transaction(async (tx) => {
      const allowedIps = list?.toString() ?? null;
      const { count } = await tx.apiUser.updateMany({ where: { username }, data: { allowedIps } });
      if (count === 0) throw errors.notFound("API user");
      const user = await tx.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
      await recordAudit(tx, { ...by, action: "api_user.allow_ip", target: `api_user:${user.username}`, changes: { allowedIps } });
      await this.announce(tx, username);
      return user;
    });
  }

  /**
   * Issues a new key; the old one stops working at once, on every instance. A
   * revoked user is reinstated. The audit entry says which fields changed,
   * never the key, its hash or its hint.
   */
  async rotate(username: string, by: AuditSource = OPERATOR): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    return this.prisma.$transaction(async (tx) => {
      const rotatedAt = new Date();
      const { count } = await tx.apiUser.updateMany({
        where: { username },
        data: { keyHash: key.hash, keyHint: key.hint, rotatedAt, revokedAt: null },
      });
      if (count === 0) throw errors.notFound("API user");
      const user = await tx.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
      await recordAudit(tx, {
        ...by,
        action: "api_user.rotate",
        target: `api_user:${user.username}`,
        changes: { key: "replaced", rotatedAt, revokedAt: null },
      });
      await this.announce(tx, username);
      return { user, apiKey: key.key };
    });
  }
}
