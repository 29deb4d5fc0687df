package net.gamecommunity.api;

import java.util.List;

/**
 * A leaderboard's top players, or the players around one ({@link LeaderboardCalls#getLeaderboardAround}).
 *
 * @param stat the statistic ranked
 * @param period the period ranked; null for the all-time board
 * @param entries highest first; ties share a rank and are ordered by player id (a period's board holds the players
 *     whose statistics changed in it)
 */
public record Leaderboard(Statistic stat, @Nullable LeaderboardPeriod period, List<LeaderboardEntry> entries) {}
