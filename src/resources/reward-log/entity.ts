import { defineEntity, field } from "../../fields/entity.js";

export const rewardLog = defineEntity({
  table: "reward_logs",
  fields: {
    id: field.id().describe("Log id"),
    playerId: field.id().references("players").describe("Id of the rewarded player"),
    rewardId: field.id().describe("Id of the reward (defined outside this service)"),
    rewardedAt: field.timestamp().describe("Moment the reward was obtained"),
  },
  component: { id: "RewardLog" },
});
