package net.gamecommunity.api;

import java.time.Instant;

/**
 * A recorded reward.
 *
 * @param id the log's id
 * @param playerId the id of the rewarded player
 * @param rewardId the id of the reward (defined by the game, not by this service)
 * @param rewardedAt when the reward was obtained, to the second
 */
public record RewardLog(int id, int playerId, int rewardId, Instant rewardedAt) {}
