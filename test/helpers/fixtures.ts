import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../../src/generated/prisma/client.js";

/** Rows made by each test, with unique names so tests never collide. */
export const unique = (prefix: string) => `${prefix}${randomBytes(4).toString("hex")}`;

export function makePlayer(prisma: PrismaClient, data: Partial<Parameters<PrismaClient["player"]["create"]>[0]["data"]> = {}) {
  return prisma.player.create({
    data: {
      pseudo: unique("p"),
      token: "secret-token",
      ip: "203.0.113.9",
      firstConnection: new Date("2025-06-01T12:00:00Z"),
      totalTimeConnection: 42.5,
      ...data,
    },
  });
}

export function makeCosmetic(prisma: PrismaClient, data: Partial<Parameters<PrismaClient["cosmetic"]["create"]>[0]["data"]> = {}) {
  return prisma.cosmetic.create({
    data: {
      name: unique("Cosmetic "),
      type: "hat",
      rarity: "rare",
      game: "lobby",
      argumentFr: "Un chapeau",
      argumentEn: "A hat",
      image: "cosmetics/hat.png",
      lootbox: true,
      price: 250,
      ...data,
    },
  });
}

export async function makeWorld(prisma: PrismaClient, data: Partial<Parameters<PrismaClient["world"]["create"]>[0]["data"]> = {}) {
  const ownerId = (data as { ownerId?: number }).ownerId ?? (await makePlayer(prisma)).id;
  return prisma.world.create({
    data: {
      name: unique("World "),
      type: "NETHER",
      state: "unLoaded",
      status: "PUBLIC",
      lastUsed: new Date("2026-05-05T10:00:00Z"),
      spawnLocation: "0,64,0",
      tag: "event",
      ...data,
      ownerId,
    } as Parameters<PrismaClient["world"]["create"]>[0]["data"],
  });
}
