import { z } from "zod";
import { bool, count, id } from "../../http/fields.js";
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
