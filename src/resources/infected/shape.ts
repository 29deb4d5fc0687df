import { z } from "zod";
import { bool, count, id, out } from "../../http/fields.js";
import type { InfectedStats } from "../../generated/prisma/client.js";

export const infectedStatsSchema = z.strictObject({
  playerId: id,
  kill: count,
  assist: count,
  death: count,
  game: count,
  eligibleGame: count,
  winZ: count,
  winH: count,
  playtime: count,
  coin: count,
  point: count,
  objectif: count,
  newPlayer: bool,
});

export function toInfectedStats(s: InfectedStats) {
  return {
    playerId: s.playerId,
    kill: s.kill,
    assist: s.assist,
    death: s.death,
    game: s.game,
    eligibleGame: s.eligibleGame,
    winZ: s.winZ,
    winH: s.winH,
    playtime: s.playtime,
    coin: s.coin,
    point: s.point,
    objectif: s.objectif,
    newPlayer: s.newPlayer,
  };
}

export const infectedStatsResponse = z
  .strictObject({
    playerId: out.id("Player id"),
    kill: out.count("Total kills"),
    assist: out.count("Total assists"),
    death: out.count("Total deaths"),
    game: out.count("Games played"),
    eligibleGame: out.count("Games eligible for points"),
    winZ: out.count("Wins as zombie"),
    winH: out.count("Wins as human"),
    playtime: out.count("Play time (the game plugin's unit)"),
    coin: out.count("Coins"),
    point: out.count("Points"),
    objectif: out.count("Objectives completed"),
    newPlayer: out.bool("Whether the player is new"),
  })
  .meta({ id: "InfectedStats", description: "Infected v2 statistics of one player" });
