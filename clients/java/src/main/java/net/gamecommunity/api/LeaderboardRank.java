package net.gamecommunity.api;

/**
 * One player's place on a leaderboard ({@link LeaderboardCalls#getLeaderboardRank}).
 *
 * @param stat the statistic ranked
 * @param period the period ranked; null for the all-time board
 * @param entry the player's rank and value
 */
public record LeaderboardRank(Statistic stat, @Nullable LeaderboardPeriod period, LeaderboardEntry entry) {}
