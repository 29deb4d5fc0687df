package net.gamecommunity.api;

import java.time.Instant;

/** A recorded reward; {@code rewardedAt} is to the second. */
public record RewardLog(int id, int playerId, int rewardId, Instant rewardedAt) {}
