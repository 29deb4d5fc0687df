package net.gamecommunity.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Which leaderboard: a {@link Statistic} ranked over all time (the running totals), or over a period (what each
 * player gained in it). Immutable; make one per board a plugin shows and keep it.
 *
 * <pre>{@code
 * Board weeklyKills = Board.current(Statistic.KILL, PeriodKind.WEEK);
 * Board lastMonth = Board.past(Statistic.COIN, PeriodKind.MONTH, "2026-11");
 * Board winter = Board.season(Statistic.WIN_H, "winter-2026");
 * }</pre>
 */
public final class Board {
  private final Statistic stat;
  private final Map<String, String> query;

  private Board(Statistic stat, Map<String, String> query) {
    this.stat = stat;
    this.query = query;
  }

  /**
   * @param stat the statistic
   * @return the all-time board: players ranked by the statistic's running total
   * @throws NullPointerException when {@code stat} is null
   */
  public static Board allTime(Statistic stat) {
    return of(stat, "all", null, null);
  }

  /**
   * @param stat the statistic
   * @param kind {@link PeriodKind#DAY}, {@link PeriodKind#WEEK} or {@link PeriodKind#MONTH}
   * @return the board of the current day, week or month: players ranked by what they gained in it
   * @throws IllegalArgumentException when {@code kind} is {@link PeriodKind#SEASON} (a season has a name: {@link #season})
   * @throws NullPointerException when an argument is null
   */
  public static Board current(Statistic stat, PeriodKind kind) {
    return of(stat, calendar(kind), null, null);
  }

  /**
   * @param stat the statistic
   * @param kind {@link PeriodKind#DAY}, {@link PeriodKind#WEEK} or {@link PeriodKind#MONTH}
   * @param key the day {@code 2026-12-03}, the ISO week {@code 2026-W49} or the month {@code 2026-12} (the service
   *     keeps them {@code LEADERBOARD_RETAIN_DAYS}, 400 by default)
   * @return the board of that past (or current) period, final once it has ended
   * @throws IllegalArgumentException when {@code kind} is {@link PeriodKind#SEASON} or {@code key} is blank
   * @throws NullPointerException when an argument is null
   */
  public static Board past(Statistic stat, PeriodKind kind, String key) {
    return of(stat, calendar(kind), "key", text(key, "key"));
  }

  /**
   * @param stat the statistic
   * @param name the season's name, as an admin started it ({@code winter-2026})
   * @return the board of that season (final once it has ended)
   * @throws IllegalArgumentException when {@code name} is blank
   * @throws NullPointerException when an argument is null
   */
  public static Board season(Statistic stat, String name) {
    return of(stat, "season", "season", text(name, "name"));
  }

  private static Board of(Statistic stat, String period, String name, String value) {
    Map<String, String> query = new LinkedHashMap<>();
    query.put("stat", Objects.requireNonNull(stat, "stat").wireName());
    query.put("period", period);
    if (name != null) query.put(name, value);
    return new Board(stat, Collections.unmodifiableMap(query));
  }

  private static String calendar(PeriodKind kind) {
    if (Objects.requireNonNull(kind, "kind") == PeriodKind.SEASON) {
      throw new IllegalArgumentException("kind: a season has a name, use Board.season(stat, name)");
    }
    return kind.wireName();
  }

  private static String text(String value, String name) {
    if (Objects.requireNonNull(value, name).isBlank()) throw new IllegalArgumentException(name + ": empty");
    return value;
  }

  /** @return the statistic ranked */
  public Statistic stat() {
    return stat;
  }

  /** The most players a top holds, and on each side of a player: the service's limits (its tests check these). */
  static final int MAX_TOP = 100;
  static final int MAX_AROUND = 50;

  /** The query of the top {@code limit} of {@code board}. */
  static Map<String, String> top(Board board, int limit) {
    if (limit < 1 || limit > MAX_TOP) throw new IllegalArgumentException("limit: expected 1 to " + MAX_TOP + ", got " + limit);
    return with(board, "limit", limit);
  }

  /** The query of one player's rank on {@code board}. */
  static Map<String, String> rank(Board board, int playerId) {
    return with(board, "playerId", playerId);
  }

  /** The query of the {@code k} players on each side of a player on {@code board}. */
  static Map<String, String> around(Board board, int playerId, int k) {
    if (k < 0 || k > MAX_AROUND) throw new IllegalArgumentException("k: expected 0 to " + MAX_AROUND + ", got " + k);
    Map<String, String> query = with(board, "playerId", playerId);
    query.put("k", Integer.toString(k));
    return query;
  }

  private static Map<String, String> with(Board board, String name, int value) {
    Map<String, String> query = new LinkedHashMap<>(Objects.requireNonNull(board, "board: null where a value is required").query);
    query.put(name, Integer.toString(value));
    return query;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Board b && b.query.equals(query);
  }

  @Override
  public int hashCode() {
    return query.hashCode();
  }

  /** @return the board as its query names it: {@code Board[stat=kill, period=week]} */
  @Override
  public String toString() {
    return "Board" + query.toString().replace('{', '[').replace('}', ']');
  }
}
