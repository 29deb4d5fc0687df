package net.gamecommunity.api;

import java.time.Instant;

/**
 * The period a leaderboard ranks (the all-time board has none).
 *
 * @param kind a day, week, month or season
 * @param key {@code 2026-12-03}, {@code 2026-W49}, {@code 2026-12}, or the season's name
 * @param startsAt when it begins
 * @param endsAt when it ends; null for a season not ended yet
 * @param countedFrom when its gains began to be counted: {@code startsAt}, or later when the service made the period
 *     late (after an outage longer than a whole period): then the board misses what was gained before
 * @param ended whether it has ended: its board is final
 */
public record LeaderboardPeriod(PeriodKind kind, String key, Instant startsAt, @Nullable Instant endsAt, Instant countedFrom, boolean ended) {}
