package net.gamecommunity.api;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@link CommunityApi}'s calls on players: the lists (in full by grade, or without the sensitive fields), the
 * lookups by pseudo or nickname, and the pollers and caches that keep those lists fresh.
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface.
 */
public sealed interface PlayerCalls permits CommunityApi {
  /**
   * Every player of a grade, in full (token, ip and connection times included).
   *
   * @param gradeId the grade's id
   * @return the grade's players, in full
   */
  CompletableFuture<List<FullPlayer>> getAllFullPlayersByGradeId(int gradeId);

  /** @return every player, without the sensitive fields; for a big community, prefer {@link #allPlayersSync()} */
  CompletableFuture<List<PlayerSummary>> getAllPlayers();

  /**
   * The player whose pseudo, else nickname, is {@code nick}, regardless of case.
   *
   * @param nick a pseudo or a nickname
   * @return the player; failed with {@link ApiException.Kind#NOT_FOUND} if none (see {@link #findPlayerByNick})
   */
  CompletableFuture<PlayerSummary> getPlayerByNick(String nick);

  /**
   * The same lookup, where "no such player" is an answer, not a failure: an empty Optional; only real
   * failures fail the future. For a joining player, whose Minecraft name is a pseudo, use {@link #findPlayerByPseudo}.
   *
   * @param nick a pseudo or a nickname
   * @return the player, or empty if none has that pseudo or nickname
   */
  default CompletableFuture<Optional<PlayerSummary>> findPlayerByNick(String nick) {
    return Failures.notFoundAsEmpty(getPlayerByNick(nick));
  }

  /**
   * The player whose pseudo (their Minecraft name) is {@code pseudo}, regardless of case, never matching a
   * nickname: the join path's lookup, where a newcomer whose name is someone else's nickname must not be handed
   * that player's profile and credits.
   *
   * @param pseudo a pseudo
   * @return the player; failed with {@link ApiException.Kind#NOT_FOUND} if none (see {@link #findPlayerByPseudo})
   */
  CompletableFuture<PlayerSummary> getPlayerByPseudo(String pseudo);

  /**
   * {@link #getPlayerByPseudo}, where "no such player" is an empty Optional: the join path's lookup.
   *
   * <pre>{@code
   * api.findPlayerByPseudo(player.getName()).thenAccept(found -> found.ifPresentOrElse(this::greet, () -> invite(player)));
   * }</pre>
   *
   * @param pseudo a pseudo
   * @return the player, or empty if none has that pseudo
   */
  default CompletableFuture<Optional<PlayerSummary>> findPlayerByPseudo(String pseudo) {
    return Failures.notFoundAsEmpty(getPlayerByPseudo(pseudo));
  }

  /**
   * @param gradeId the grade's id
   * @return a poller of the grade's players, in full
   */
  ListPoller<FullPlayer> fullPlayersByGradeIdPoller(int gradeId);

  /** @return a poller of every player */
  ListPoller<PlayerSummary> allPlayersPoller();

  /** @return a cache of the players, by id */
  ListSync<Integer, PlayerSummary> allPlayersSync();

  /**
   * A grade's players in full, by id; a player whose grade changed leaves the cache.
   *
   * @param gradeId the grade's id
   * @return a cache of the grade's players, by id
   */
  ListSync<Integer, FullPlayer> fullPlayersByGradeIdSync(int gradeId);
}
