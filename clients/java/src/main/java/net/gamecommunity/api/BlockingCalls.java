package net.gamecommunity.api;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * What {@link CommunityApi.Blocking} does: each call of a {@link CommunityApi}, waiting for its answer, its
 * failure thrown as an {@link ApiException} with the caller's stack trace. Kept apart so that
 * {@code CommunityApi.java} holds the interface; {@code CommunityApi.Blocking} extends it and is the type
 * plugins use (this class is not public: its methods are documented as {@code Blocking}'s).
 */
abstract class BlockingCalls {
  private final CommunityApi api;

  BlockingCalls(CommunityApi api) {
    this.api = Objects.requireNonNull(api, "api");
  }

  /**
   * As {@link CommunityApi#getAllFullPlayersByGradeId}, waiting for the answer.
   *
   * @param gradeId the grade's id
   * @return the grade's players, in full
   * @throws ApiException when the call fails
   */
  public List<FullPlayer> getAllFullPlayersByGradeId(int gradeId) {
    return waitFor(api.getAllFullPlayersByGradeId(gradeId));
  }

  /**
   * As {@link CommunityApi#getAllPlayers}, waiting for the answer.
   *
   * @return every player
   * @throws ApiException when the call fails
   */
  public List<PlayerSummary> getAllPlayers() {
    return waitFor(api.getAllPlayers());
  }

  /**
   * As {@link CommunityApi#getPlayerByNick}, waiting for the answer.
   *
   * @param nick a pseudo or a nickname
   * @return the player whose pseudo, else nickname, is {@code nick}
   * @throws ApiException when the call fails
   */
  public PlayerSummary getPlayerByNick(String nick) {
    return waitFor(api.getPlayerByNick(nick));
  }

  /**
   * As {@link CommunityApi#findPlayerByNick}, waiting for the answer.
   *
   * @param nick a pseudo or a nickname
   * @return the player, or empty if none has that pseudo or nickname
   * @throws ApiException when the call fails otherwise
   */
  public Optional<PlayerSummary> findPlayerByNick(String nick) {
    return waitFor(api.findPlayerByNick(nick));
  }

  /**
   * As {@link CommunityApi#getPlayerByPseudo}, waiting for the answer.
   *
   * @param pseudo a pseudo
   * @return the player whose pseudo is {@code pseudo}
   * @throws ApiException when the call fails
   */
  public PlayerSummary getPlayerByPseudo(String pseudo) {
    return waitFor(api.getPlayerByPseudo(pseudo));
  }

  /**
   * As {@link CommunityApi#findPlayerByPseudo}, waiting for the answer.
   *
   * @param pseudo a pseudo
   * @return the player, or empty if none has that pseudo
   * @throws ApiException when the call fails otherwise
   */
  public Optional<PlayerSummary> findPlayerByPseudo(String pseudo) {
    return waitFor(api.findPlayerByPseudo(pseudo));
  }

  /**
   * As {@link CommunityApi#getCosmetic}, waiting for the answer.
   *
   * @param id the cosmetic's id
   * @return the cosmetic
   * @throws ApiException when the call fails
   */
  public Cosmetic getCosmetic(int id) {
    return waitFor(api.getCosmetic(id));
  }

  /**
   * As {@link CommunityApi#getCosmeticTagged}, waiting for the answer.
   *
   * @param id the cosmetic's id
   * @return the cosmetic and its ETag
   * @throws ApiException when the call fails
   */
  public Tagged<Cosmetic> getCosmeticTagged(int id) {
    return waitFor(api.getCosmeticTagged(id));
  }

  /**
   * As {@link CommunityApi#updateCosmetic}, waiting for the answer.
   *
   * @param update the change
   * @return the cosmetic after the change, with its new ETag
   * @throws ApiException when the call fails
   */
  public Tagged<Cosmetic> updateCosmetic(CosmeticUpdate update) {
    return waitFor(api.updateCosmetic(update));
  }

  /**
   * As {@link CommunityApi#createForm}, waiting for the answer.
   *
   * @param answer the form answer
   * @return what was recorded
   * @throws ApiException when the call fails
   */
  public Created<FormAnswer> createForm(NewFormAnswer answer) {
    return waitFor(api.createForm(answer));
  }

  /**
   * As {@link CommunityApi#createForm}, waiting for the answer.
   *
   * @param answer the form answer
   * @param idempotencyKey your own Idempotency-Key
   * @return what was recorded
   * @throws ApiException when the call fails
   */
  public Created<FormAnswer> createForm(NewFormAnswer answer, String idempotencyKey) {
    return waitFor(api.createForm(answer, idempotencyKey));
  }

  /**
   * As {@link CommunityApi#getAllInfectedStats}, waiting for the answer.
   *
   * @return the Infected v2 statistics of every player
   * @throws ApiException when the call fails
   */
  public List<InfectedStats> getAllInfectedStats() {
    return waitFor(api.getAllInfectedStats());
  }

  /**
   * As {@link CommunityApi#getActiveItems}, waiting for the answer.
   *
   * @return the items active now
   * @throws ApiException when the call fails
   */
  public List<TemporaryItem> getActiveItems() {
    return waitFor(api.getActiveItems());
  }

  /**
   * As {@link CommunityApi#createRewardLog}, waiting for the answer.
   *
   * @param log the reward
   * @return what was recorded
   * @throws ApiException when the call fails
   */
  public Created<RewardLog> createRewardLog(NewRewardLog log) {
    return waitFor(api.createRewardLog(log));
  }

  /**
   * As {@link CommunityApi#createRewardLog}, waiting for the answer.
   *
   * @param log the reward
   * @param idempotencyKey your own Idempotency-Key
   * @return what was recorded
   * @throws ApiException when the call fails
   */
  public Created<RewardLog> createRewardLog(NewRewardLog log, String idempotencyKey) {
    return waitFor(api.createRewardLog(log, idempotencyKey));
  }

  /**
   * As {@link CommunityApi#register}, waiting for the answer.
   *
   * @param user the user to register
   * @return the user and its key
   * @throws ApiException when the call fails
   */
  public Created<RegisteredUser> register(NewApiUser user) {
    return waitFor(api.register(user));
  }

  /**
   * As {@link CommunityApi#register}, waiting for the answer.
   *
   * @param user the user to register
   * @param idempotencyKey your own Idempotency-Key
   * @return the user and its key
   * @throws ApiException when the call fails
   */
  public Created<RegisteredUser> register(NewApiUser user, String idempotencyKey) {
    return waitFor(api.register(user, idempotencyKey));
  }

  /**
   * As {@link CommunityApi#updateWorld}, waiting for the answer.
   *
   * @param update the change
   * @return the world after the change
   * @throws ApiException when the call fails
   */
  public FreebuildWorld updateWorld(WorldUpdate update) {
    return waitFor(api.updateWorld(update));
  }

  /**
   * As {@link CommunityApi#getAllMaps}, waiting for the answer.
   *
   * @return every parkour map
   * @throws ApiException when the call fails
   */
  public List<ParkourMap> getAllMaps() {
    return waitFor(api.getAllMaps());
  }

  /**
   * As {@link CommunityApi#getLeaderboard}, waiting for the answer.
   *
   * @param board which statistic, over which period
   * @param limit how many players, 1 to 100
   * @return the board's first {@code limit} players
   * @throws ApiException when the call fails
   */
  public Leaderboard getLeaderboard(Board board, int limit) {
    return waitFor(api.getLeaderboard(board, limit));
  }

  /**
   * As {@link CommunityApi#getLeaderboardRank}, waiting for the answer.
   *
   * @param board which statistic, over which period
   * @param playerId the player
   * @return the player's rank and value
   * @throws ApiException when the call fails ({@link ApiException.Kind#NOT_FOUND}: the player is not on the board)
   */
  public LeaderboardRank getLeaderboardRank(Board board, int playerId) {
    return waitFor(api.getLeaderboardRank(board, playerId));
  }

  /**
   * As {@link CommunityApi#getLeaderboardAround}, waiting for the answer.
   *
   * @param board which statistic, over which period
   * @param playerId the player
   * @param k how many players above and below, 0 to 50
   * @return the player with up to {@code k} players on each side
   * @throws ApiException when the call fails
   */
  public Leaderboard getLeaderboardAround(Board board, int playerId, int k) {
    return waitFor(api.getLeaderboardAround(board, playerId, k));
  }

  /** {@link CommunityApi.Blocking#await}'s work: the value, or the ApiException thrown in the caller's thread. */
  static <T> T waitFor(CompletableFuture<T> future) {
    if (ClientThreads.inATask() && !future.isDone()) {
      throw new IllegalStateException("blocking() called on a thread of the client's executor (in a callback, when the client has no"
          + " callback executor): it could wait for an answer that needs this very thread. Use the future's callbacks, or call"
          + " blocking() from a thread of your own (an async task)");
    }
    try {
      return future.join();
    } catch (CompletionException e) {
      throw ApiException.unwrap(e).inCallersThread();
    }
  }
}
