package net.gamecommunity.api;

import java.util.Locale;

/**
 * What a leaderboard's period is: a day, an ISO week (from Monday) or a month in the operator's time zone
 * ({@code LEADERBOARD_TIME_ZONE}, UTC by default), or a season an admin starts and ends.
 */
public enum PeriodKind implements WireNamed {
  /** A day: key {@code 2026-12-03}. */
  DAY,
  /** An ISO week, from Monday: key {@code 2026-W49}. */
  WEEK,
  /** A month: key {@code 2026-12}. */
  MONTH,
  /** A season an admin started: its key is its name ({@code winter-2026}). */
  SEASON;

  /** @return the kind as the API names it ({@code week}) */
  @Override
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
