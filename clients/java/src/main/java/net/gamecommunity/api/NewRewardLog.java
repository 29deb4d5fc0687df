package net.gamecommunity.api;

import java.time.Instant;

/**
 * The body of create-reward-log. The same (player, reward, second) is recorded once: a second one is a
 * {@link ApiException.Kind#CONFLICT}.
 */
public record NewRewardLog(int playerId, int rewardId, Instant rewardedAt) {

  /** Rewarded now, by the service's clock. */
  public static NewRewardLog now(int playerId, int rewardId) {
    return new NewRewardLog(playerId, rewardId, null);
  }

  public static NewRewardLog at(int playerId, int rewardId, Instant rewardedAt) {
    return new NewRewardLog(playerId, rewardId, java.util.Objects.requireNonNull(rewardedAt, "rewardedAt"));
  }
}
