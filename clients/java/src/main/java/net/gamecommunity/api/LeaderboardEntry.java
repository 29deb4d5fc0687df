package net.gamecommunity.api;

/**
 * One player's place on a leaderboard.
 *
 * @param rank 1 for the highest value; ties share a rank (1, 2, 2, 4) and are ordered by player id
 * @param playerId the player's id
 * @param pseudo the player's pseudo now
 * @param value the statistic (all-time), or what the player gained in the period
 */
public record LeaderboardEntry(int rank, int playerId, String pseudo, long value) {}
