import { z } from "zod";
import { formatTimestamp, id, timestamp } from "../../http/fields.js";
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
