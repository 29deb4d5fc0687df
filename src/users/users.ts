import { z } from "zod";
import { AddressAllowList } from "../auth/address-allow-list.js";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../auth/api-keys.js";
import { conflictMessage } from "../db/constraints.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import type { KeyCache } from "../auth/key-cache.js";
import { errors } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/** The rules of the decisions, shared by POST /inscription and the operator CLI. */
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

export interface Caller {
  id: number;
  username: string;
  role: string;
  /** Where the key may be used from; absent: anywhere. Cached with the caller, so changing it announces the user. */
  allowedAddresses?: AddressAllowList;
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
  ) {}

  /** Registers a user; the returned key is the only copy that will ever exist. */
  async create(username: string, role: string = DEFAULT_ROLE): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    try {
      const user = await this.prisma.apiUser.create({
        data: { username, role, keyHash: key.hash, keyHint: key.hint },
        select: summary,
      });
      return { user, apiKey: key.key };
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
    const user = await this.prisma.apiUser.findUnique({
      where: { keyHash },
      select: { id: true, username: true, role: true, revokedAt: true, allowedIps: true },
    });
    if (!user || user.revokedAt !== null) return undefined;
    const caller: Caller = { id: user.id, username: user.username, role: user.role };
    if (user.allowedIps !== null) caller.allowedAddresses = AddressAllowList.parse(user.allowedIps).list ?? AddressAllowList.nowhere();
    this.cache?.set(keyHash, caller);
    return caller;
  }

  /** Revokes the user's key at once, on every instance. The username stays taken. */
  async revoke(username: string): Promise<ApiUserSummary> {
    const [{ count }] = await this.prisma.$transaction([
      this.prisma.apiUser.updateMany({ where: { username, revokedAt: null }, data: { revokedAt: new Date() } }),
      this.announce(username),
    ]);
    const user = await this.prisma.apiUser.findUnique({ where: { username }, select: summary });
    if (!user) throw errors.notFound("API user");
    if (count === 0) throw errors.conflict(`API user '${user.username}' is already revoked`);
    return user;
  }

  /** Tells every instance (on commit) to drop this user's cached keys; this one at once. */
  private announce(username: string) {
    this.cache?.forgetUser(username);
    return this.prisma.$executeRaw`SELECT pg_notify(${USER_CHANGED_CHANNEL}, lower(${username}))`;
  }

  /**
   * Restricts where the user's key may be used from (null: anywhere again).
   * Every instance drops the user's cached keys, so the change holds at once.
   */
  async setAllowedAddresses(username: string, list: AddressAllowList | null): Promise<ApiUserSummary> {
    const [{ count }] = await this.prisma.$transaction([
      this.prisma.apiUser.updateMany({ where: { username }, data: { allowedIps: list?.toString() ?? null } }),
      this.announce(username),
    ]);
    if (count === 0) throw errors.notFound("API user");
    return this.prisma.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
  }

  /** Issues a new key; the old one stops working at once, on every instance. A revoked user is reinstated. */
  async rotate(username: string): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    const [{ count }] = await this.prisma.$transaction([
      this.prisma.apiUser.updateMany({
        where: { username },
        data: { keyHash: key.hash, keyHint: key.hint, rotatedAt: new Date(), revokedAt: null },
      }),
      this.announce(username),
    ]);
    if (count === 0) throw errors.notFound("API user");
    const user = await this.prisma.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
    return { user, apiKey: key.key };
  }
}
