package net.gamecommunity.api;

import java.time.Instant;

/**
 * The body of create-reward-log. With a moment, the same (player, reward, second) is recorded once: a second
 * one is a {@link ApiException.Kind#CONFLICT} ({@code DUPLICATE}). Without one ({@link #now}), never a
 * duplicate: two rewards in the same second (a double kill) are two logs, and the client's Idempotency-Key
 * keeps a retry from recording a third. A player that does not exist is a {@code CONFLICT} too
 * ({@code REFERENCE_NOT_FOUND}).
 *
 * @param playerId the id of the rewarded player
 * @param rewardId the id of the reward (defined by the game)
 * @param rewardedAt when it was obtained, sent to the second; null for the service's now
 */
public record NewRewardLog(int playerId, int rewardId, @Nullable Instant rewardedAt) {

  /**
   * Rewarded now, by the service's clock.
   *
   * @param playerId the id of the rewarded player
   * @param rewardId the id of the reward
   * @return the reward log to send
   */
  public static NewRewardLog now(int playerId, int rewardId) {
    return new NewRewardLog(playerId, rewardId, null);
  }

  /**
   * Rewarded at a given moment (kept to the second).
   *
   * @param playerId the id of the rewarded player
   * @param rewardId the id of the reward
   * @param rewardedAt when it was obtained
   * @return the reward log to send
   */
  public static NewRewardLog at(int playerId, int rewardId, Instant rewardedAt) {
    return new NewRewardLog(playerId, rewardId, java.util.Objects.requireNonNull(rewardedAt, "rewardedAt"));
  }
}
