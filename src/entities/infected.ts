import { defineEntity, field } from "../fields/entity.js";

export const infectedStats = defineEntity({
  table: "infected_stats",
  kind: "infected_stats",
  versioned: true,
  eventsSeenThrough: "/infecte2/get-all-infectes",
  primaryKey: "playerId",
  generatedKey: false,
  fields: {
    playerId: field.id().references("players").describe("Player id"),
    kill: field.count().describe("Total kills"),
    assist: field.count().describe("Total assists"),
    death: field.count().describe("Total deaths"),
    game: field.count().describe("Games played"),
    eligibleGame: field.count().describe("Games eligible for points"),
    winZ: field.count().describe("Wins as zombie"),
    winH: field.count().describe("Wins as human"),
    playtime: field.count().describe("Play time (the game plugin's unit)"),
    coin: field.count().describe("Coins"),
    point: field.count().describe("Points"),
    objectif: field.count().describe("Objectives completed"),
    newPlayer: field.bool().describe("Whether the player is new"),
  },
  component: { id: "InfectedStats", description: "Infected v2 statistics of one player" },
});

/** The numeric statistics (what the leaderboards rank): every field but the player's id and the newPlayer flag. */
export type Statistic = Exclude<keyof typeof infectedStats.fields, "playerId" | "newPlayer">;
export const STATISTICS = Object.keys(infectedStats.fields).filter((name) => name !== "playerId" && name !== "newPlayer") as Statistic[];
