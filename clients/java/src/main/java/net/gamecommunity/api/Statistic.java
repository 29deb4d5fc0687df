package net.gamecommunity.api;

/**
 * A numeric statistic of the Infected statistics ({@link InfectedStats}), as a leaderboard ranks it: a {@link Board}
 * names one. The service's tests check this list against its own.
 */
public enum Statistic implements WireNamed {
  /** Total kills. */
  KILL("kill"),
  /** Total assists. */
  ASSIST("assist"),
  /** Total deaths. */
  DEATH("death"),
  /** Games played. */
  GAME("game"),
  /** Games that counted for points. */
  ELIGIBLE_GAME("eligibleGame"),
  /** Wins as a zombie. */
  WIN_Z("winZ"),
  /** Wins as a human. */
  WIN_H("winH"),
  /** Time played, in the game plugin's unit. */
  PLAYTIME("playtime"),
  /** Coins earned. */
  COIN("coin"),
  /** Points earned. */
  POINT("point"),
  /** Objectives completed. */
  OBJECTIF("objectif");

  private final String wire;

  Statistic(String wire) {
    this.wire = wire;
  }

  /** @return the statistic as the API names it ({@code kill}, {@code eligibleGame}) */
  @Override
  public String wireName() {
    return wire;
  }
}
