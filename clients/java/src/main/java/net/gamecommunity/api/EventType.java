package net.gamecommunity.api;

import java.util.Locale;

/**
 * An event's type ({@link Event#eventType()}): {@code <resource>.<what happened>} on the wire, the constant's name
 * in lower case with its last {@code _} a dot ({@link #wireName()}), unless the constant names its wire name. A type this version of the client does not know
 * (a newer service's) is {@link #UNKNOWN}: {@link Event#type()} still gives its name. The service's tests check this
 * list against its own.
 */
public enum EventType {
  /** A reward was recorded (create-reward-log, or an import). */
  REWARD_LOG_CREATED,
  /** A reward log was changed by an import. */
  REWARD_LOG_UPDATED,
  /** A form answer was sent (create-form, or an import). */
  FORM_CREATED,
  /** A form answer was changed by an import. */
  FORM_UPDATED,
  /** A cosmetic was created by an import. */
  COSMETIC_CREATED,
  /** A cosmetic was changed (update-cosmetic, or an import). */
  COSMETIC_UPDATED,
  /** A world was created by an import. */
  WORLD_CREATED,
  /** A world was changed (update-world, or an import). */
  WORLD_UPDATED,
  /** An API user registered (inscription): its name and role, never its key. */
  API_USER_CREATED,
  /** A player was created by an import. */
  PLAYER_CREATED,
  /** A player was changed by an import. */
  PLAYER_UPDATED,
  /** A player was erased (POST /api/admin/players/erase): their id and the receipt's, nothing else; drop what you keep of them. */
  PLAYER_ERASED,
  /** Infected statistics were created by an import. */
  INFECTED_STATS_CREATED,
  /** Infected statistics were changed by an import. */
  INFECTED_STATS_UPDATED,
  /** A temporary item was created by an import. */
  TEMPORARY_ITEM_CREATED,
  /** A temporary item was changed by an import. */
  TEMPORARY_ITEM_UPDATED,
  /** A parkour map was created by an import. */
  PARKOUR_MAP_CREATED,
  /** A parkour map was changed by an import. */
  PARKOUR_MAP_UPDATED,
  /**
   * A leaderboard period began (a day, a week, a month, a season): the data names it, with the final top of the
   * period of its kind that ended then ({@code previous}).
   */
  LEADERBOARD_PERIOD_STARTED("leaderboard.period_started"),
  /** A leaderboard season ended: the data names it, with its final top of every statistic. */
  SEASON_ENDED,
  /** A type this client does not know. */
  UNKNOWN;

  /** The wire name when it is not the derived one; null otherwise. */
  private final String wire;

  EventType() {
    this(null);
  }

  EventType(@Nullable String wire) {
    this.wire = wire;
  }

  /** @return the type as the stream and webhooks name it ({@code reward_log.created}); {@code unknown} for {@link #UNKNOWN} */
  public String wireName() {
    if (wire != null) return wire;
    String lower = name().toLowerCase(Locale.ROOT);
    int last = lower.lastIndexOf('_');
    return last < 0 ? lower : lower.substring(0, last) + "." + lower.substring(last + 1);
  }

  /**
   * @param wireName a type as the stream names it ({@code reward_log.created})
   * @return its constant, or {@link #UNKNOWN}
   */
  public static EventType of(@Nullable String wireName) {
    if (wireName == null) return UNKNOWN;
    for (EventType type : values()) if (type != UNKNOWN && type.wireName().equals(wireName)) return type;
    return UNKNOWN;
  }
}
