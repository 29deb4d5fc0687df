import { defineEntity, field } from "../fields/entity.js";

/**
 * A reward whose request sent its moment is recorded once per player, reward and moment: a retried request does not
 * record it twice. Without one, never a duplicate (a double kill is two logs; a retry is known by its Idempotency-Key).
 */
const oncePerMoment = { constraint: "reward_logs_player_reward_time_key", subject: "Reward log", taken: "is already recorded", where: "rewardedAtSent" };

export const rewardLog = defineEntity({
  table: "reward_logs",
  kind: "reward_log",
  fields: {
    id: field.id().describe("Log id"),
    playerId: field.id().references("players").unique(oncePerMoment).describe("Id of the rewarded player"),
    rewardId: field.id().unique(oncePerMoment).describe("Id of the reward (defined outside this service)"),
    rewardedAt: field.timestamp().nowByDefault().unique(oncePerMoment).describe("Moment the reward was obtained"),
  },
  component: { id: "RewardLog" },
});
