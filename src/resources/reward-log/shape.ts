import { z } from "zod";
import { formatTimestamp, id, out, timestamp } from "../../http/fields.js";
import type { RewardLog } from "../../generated/prisma/client.js";

export const rewardLogSchema = z.strictObject({
  id,
  playerId: id,
  rewardId: id,
  rewardedAt: timestamp,
});

export function toRewardLog(r: RewardLog) {
  return { id: r.id, playerId: r.playerId, rewardId: r.rewardId, rewardedAt: formatTimestamp(r.rewardedAt) };
}

export const rewardLogResponse = z
  .strictObject({
    id: out.id("Log id"),
    playerId: out.id("Id of the rewarded player"),
    rewardId: out.id("Id of the reward (defined outside this service)"),
    rewardedAt: out.timestamp("Moment the reward was obtained"),
  })
  .meta({ id: "RewardLog" });
