import { z } from "zod";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../auth/api-keys.js";
import { conflictMessage } from "../db/constraints.js";
import { uniqueViolation } from "../db/prisma-errors.js";
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
}

export interface Caller {
  id: number;
  username: string;
  role: string;
}

const summary = { username: true, role: true, keyHint: true, createdAt: true, rotatedAt: true, revokedAt: true } as const;

export class ApiUsers {
  constructor(private readonly prisma: PrismaClient) {}

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
    const user = await this.prisma.apiUser.findUnique({
      where: { keyHash: hashApiKey(key) },
      select: { id: true, username: true, role: true, revokedAt: true },
    });
    if (!user || user.revokedAt !== null) return undefined;
    return { id: user.id, username: user.username, role: user.role };
  }

  /** Revokes the user's key at once. The username stays taken. */
  async revoke(username: string): Promise<ApiUserSummary> {
    const { count } = await this.prisma.apiUser.updateMany({
      where: { username, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    const user = await this.prisma.apiUser.findUnique({ where: { username }, select: summary });
    if (!user) throw errors.notFound("API user");
    if (count === 0) throw errors.conflict(`API user '${user.username}' is already revoked`);
    return user;
  }

  /** Issues a new key; the old one stops working at once. A revoked user is reinstated. */
  async rotate(username: string): Promise<{ user: ApiUserSummary; apiKey: string }> {
    const key = generateApiKey();
    const { count } = await this.prisma.apiUser.updateMany({
      where: { username },
      data: { keyHash: key.hash, keyHint: key.hint, rotatedAt: new Date(), revokedAt: null },
    });
    if (count === 0) throw errors.notFound("API user");
    const user = await this.prisma.apiUser.findUniqueOrThrow({ where: { username }, select: summary });
    return { user, apiKey: key.key };
  }
}
