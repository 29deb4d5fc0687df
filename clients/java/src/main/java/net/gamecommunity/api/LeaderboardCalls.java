package net.gamecommunity.api;

import java.util.concurrent.CompletableFuture;

/**
 * {@link CommunityApi}'s calls on the leaderboards: the top players of a {@link Board}, one player's rank, the players
 * around one, and a poller that delivers a board only when it changed (a hologram's). Groups A, B and D may call them.
 * Ties share a rank (1, 2, 2, 4) and are ordered by player id.
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface. The calls have default implementations that fail with
 * {@link UnsupportedOperationException}, so that a fake written for an earlier version still compiles; a client made
 * by {@link CommunityApi#builder} implements them all.
 */
public sealed interface LeaderboardCalls permits CommunityApi {
  /**
   * @param board which statistic, over which period
   * @param limit how many players, 1 to 100
   * @return the first {@code limit} players; failed with {@link ApiException.Kind#BAD_REQUEST} for a season that does
   *     not exist or has not begun, or a past period not on record (the message names what exists), and with
   *     {@link ApiException.Kind#NOT_FOUND} when the current day, week or month is not made yet (the service makes
   *     each a period ahead: only at its very first start)
   */
  default CompletableFuture<Leaderboard> getLeaderboard(Board board, int limit) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException("getLeaderboard: not implemented by " + getClass().getName()));
  }

  /**
   * @param board which statistic, over which period
   * @param playerId the player
   * @return the player's rank and value; failed with {@link ApiException.Kind#NOT_FOUND} when the player has no
   *     statistics, or none that changed in the period (and as {@link #getLeaderboard})
   */
  default CompletableFuture<LeaderboardRank> getLeaderboardRank(Board board, int playerId) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException("getLeaderboardRank: not implemented by " + getClass().getName()));
  }

  /**
   * @param board which statistic, over which period
   * @param playerId the player
   * @param k how many players above and below, 0 to 50
   * @return the player with up to {@code k} players above and {@code k} below, in the board's order; failed as
   *     {@link #getLeaderboardRank}
   */
  default CompletableFuture<Leaderboard> getLeaderboardAround(Board board, int playerId, int k) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException("getLeaderboardAround: not implemented by " + getClass().getName()));
  }

  /**
   * A poller of a board's top: each poll sends the last board's ETag, and an unchanged board (no statistic, pseudo or
   * period changed) is an empty 304 that delivers nothing, so a hologram is redrawn only when it changed. When the
   * day, week or month turns, the board of the new one is delivered (its {@link Leaderboard#period()} says which).
   *
   * @param board which statistic, over which period
   * @param limit how many players, 1 to 100
   * @return a poller of that board; made by a real client only (this default throws)
   * @throws IllegalArgumentException when {@code limit} is out of 1 to 100
   * @throws NullPointerException when {@code board} is null
   */
  default LeaderboardPoller leaderboardPoller(Board board, int limit) {
    throw new UnsupportedOperationException("leaderboardPoller: not implemented by " + getClass().getName());
  }
}
