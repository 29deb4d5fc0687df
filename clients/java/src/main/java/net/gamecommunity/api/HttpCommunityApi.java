package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** The client {@link CommunityApi#builder} makes: each call a request of a {@link Route}, sent by the {@link Transport}. */
final class HttpCommunityApi extends RequestPipeline implements CommunityApi {
  /** This client's version, sent in User-Agent; the artifact's version in pom.xml. */
  static final String VERSION = "3.1.0";

  private final Set<EventSubscription> subscriptions = ConcurrentHashMap.newKeySet();

  HttpCommunityApi(Transport transport, Duration deadline, Executor callbacks) {
    super(transport, deadline, callbacks);
  }

  /** The client behind {@code api}, for what only a client of this package can do ({@link DurableWrites}). */
  static HttpCommunityApi of(CommunityApi api) {
    if (Objects.requireNonNull(api, "api") instanceof HttpCommunityApi real) return real;
    throw new IllegalArgumentException("api: a client made by CommunityApi.builder is needed, not " + api.getClass().getName());
  }

  @Override
  public CompletableFuture<List<FullPlayer>> getAllFullPlayersByGradeId(int gradeId) {
    return body(send(Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId), null, Map.of(), true));
  }

  @Override
  public CompletableFuture<List<PlayerSummary>> getAllPlayers() {
    return body(send(Route.ALL_PLAYERS, Map.of(), null, Map.of(), true));
  }

  @Override
  public CompletableFuture<PlayerSummary> getPlayerByNick(String nick) {
    return call(() -> bind(player(required(nick, "nick"), false)));
  }

  // The defaults of these three compose on the public future, a hop of the callback executor each: not here.
  @Override
  public CompletableFuture<Optional<PlayerSummary>> findPlayerByNick(String nick) {
    return call(() -> bind(Failures.notFoundAsEmpty(player(required(nick, "nick"), false))));
  }

  @Override
  public CompletableFuture<PlayerSummary> getPlayerByPseudo(String pseudo) {
    return call(() -> bind(player(required(pseudo, "pseudo"), true)));
  }

  @Override
  public CompletableFuture<Optional<PlayerSummary>> findPlayerByPseudo(String pseudo) {
    return call(() -> bind(Failures.notFoundAsEmpty(player(required(pseudo, "pseudo"), true))));
  }

  private CompletableFuture<PlayerSummary> player(String name, boolean pseudoOnly) {
    Map<String, String> query = pseudoOnly ? Map.of("nick", name, "match", "pseudo") : Map.of("nick", name);
    return this.<PlayerSummary>send(Route.PLAYER_BY_NICK, query, null, Map.of(), true).thenApply(Answer::body);
  }

  @Override
  public CompletableFuture<Tagged<Cosmetic>> getCosmeticTagged(int id) {
    return bind(cosmetic(id));
  }

  @Override
  public CompletableFuture<Cosmetic> getCosmetic(int id) {
    return bind(cosmetic(id).thenApply(Tagged::value));
  }

  private CompletableFuture<Tagged<Cosmetic>> cosmetic(int id) {
    return this.<Cosmetic>send(Route.GET_COSMETIC, Map.of("id", Integer.toString(id)), null, Map.of(), true)
        .thenApply(a -> new Tagged<>(a.body(), a.etag()));
  }

  @Override
  public CompletableFuture<Tagged<Cosmetic>> updateCosmetic(CosmeticUpdate update) {
    return call(() -> {
      Map<String, String> headers = required(update, "update").ifMatch == null ? Map.of() : Map.of(Headers.IF_MATCH, update.ifMatch);
      return bind(this.<Cosmetic>send(Route.UPDATE_COSMETIC, Map.of(), update.body, headers, update.retry)
          .thenApply(a -> new Tagged<>(a.body(), a.etag())));
    });
  }

  @Override
  public CompletableFuture<Created<FormAnswer>> createForm(NewFormAnswer answer, String idempotencyKey) {
    return create(Route.CREATE_FORM, answer, idempotencyKey);
  }

  @Override
  public CompletableFuture<Created<RewardLog>> createRewardLog(NewRewardLog log, String idempotencyKey) {
    return create(Route.CREATE_REWARD_LOG, log, idempotencyKey);
  }

  @Override
  public CompletableFuture<Created<RegisteredUser>> register(NewApiUser user, String idempotencyKey) {
    return create(Route.INSCRIPTION, user, idempotencyKey);
  }

  @Override
  public CompletableFuture<List<InfectedStats>> getAllInfectedStats() {
    return body(send(Route.ALL_INFECTED_STATS, Map.of(), null, Map.of(), true));
  }

  @Override
  public CompletableFuture<List<TemporaryItem>> getActiveItems() {
    return body(send(Route.ACTIVE_ITEMS, Map.of(), null, Map.of(), true));
  }

  @Override
  public CompletableFuture<FreebuildWorld> updateWorld(WorldUpdate update) {
    return call(() -> body(send(Route.UPDATE_WORLD, Map.of(), required(update, "update").body, Map.of(), update.retry)));
  }

  @Override
  public CompletableFuture<List<ParkourMap>> getAllMaps() {
    return body(send(Route.ALL_MAPS, Map.of(), null, Map.of(), true));
  }

  @Override
  public CompletableFuture<Leaderboard> getLeaderboard(Board board, int limit) {
    return call(() -> body(send(Route.LEADERBOARD, Board.top(board, limit), null, Map.of(), true)));
  }

  @Override
  public CompletableFuture<LeaderboardRank> getLeaderboardRank(Board board, int playerId) {
    return call(() -> body(send(Route.LEADERBOARD_RANK, Board.rank(board, playerId), null, Map.of(), true)));
  }

  @Override
  public CompletableFuture<Leaderboard> getLeaderboardAround(Board board, int playerId, int k) {
    return call(() -> body(send(Route.LEADERBOARD_AROUND, Board.around(board, playerId, k), null, Map.of(), true)));
  }

  @Override
  public LeaderboardPoller leaderboardPoller(Board board, int limit) {
    return new LeaderboardPoller(this, Board.top(board, limit));
  }

  @Override
  public ListPoller<FullPlayer> fullPlayersByGradeIdPoller(int gradeId) {
    return new ListPoller<>(this, Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId));
  }

  @Override
  public ListPoller<PlayerSummary> allPlayersPoller() {
    return new ListPoller<>(this, Route.ALL_PLAYERS, Map.of());
  }

  @Override
  public ListPoller<InfectedStats> infectedStatsPoller() {
    return new ListPoller<>(this, Route.ALL_INFECTED_STATS, Map.of());
  }

  @Override
  public ListPoller<TemporaryItem> activeItemsPoller() {
    return new ListPoller<>(this, Route.ACTIVE_ITEMS, Map.of());
  }

  @Override
  public ListPoller<ParkourMap> mapsPoller() {
    return new ListPoller<>(this, Route.ALL_MAPS, Map.of());
  }

  @Override
  public ListSync<Integer, PlayerSummary> allPlayersSync() {
    return new ListSync<>(this, Route.ALL_PLAYERS, Map.of(), PlayerSummary::id, null);
  }

  @Override
  public ListSync<Integer, FullPlayer> fullPlayersByGradeIdSync(int gradeId) {
    return new ListSync<>(this, Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId), FullPlayer::id, p -> p.gradeId() == gradeId);
  }

  @Override
  public ListSync<Integer, InfectedStats> infectedStatsSync() {
    return new ListSync<>(this, Route.ALL_INFECTED_STATS, Map.of(), InfectedStats::playerId, null);
  }

  @Override
  public ListSync<String, TemporaryItem> activeItemsSync() {
    return new ListSync<>(this, Route.ACTIVE_ITEMS, Map.of(), TemporaryItem::id, item -> {
      Instant now = Instant.now();
      return !item.startDate().isAfter(now) && now.isBefore(item.endDate());
    });
  }

  @Override
  public ListSync<Integer, ParkourMap> mapsSync() {
    return new ListSync<>(this, Route.ALL_MAPS, Map.of(), ParkourMap::id, null);
  }

  @Override
  public EventSubscription subscribe(Collection<String> types, @Nullable String lastEventId, EventListener listener) {
    if (transport.isClosed()) throw new IllegalStateException("this CommunityApi is closed");
    EventSubscription subscription = new EventSubscription(transport, BoundFuture.orInline(callbackExecutor()), List.copyOf(types),
        lastEventId, Objects.requireNonNull(listener, "listener"), subscriptions::remove);
    subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  @Override
  public Blocking blocking() {
    return new Blocking(callbacks == null ? this : new HttpCommunityApi(transport, deadline, null));
  }

  @Override
  public CommunityApi withDeadline(Duration deadline) {
    return new HttpCommunityApi(transport, Transport.positive(deadline, "deadline"), callbacks);
  }

  @Override
  public Optional<RateLimit> rateLimit() {
    return transport.rateBudget.lastSeen();
  }

  @Override
  public void close() {
    subscriptions.forEach(EventSubscription::close);
    transport.close(Duration.ZERO);
  }

  @Override
  public void close(Duration grace) {
    subscriptions.forEach(EventSubscription::close);
    transport.close(Objects.requireNonNull(grace, "grace"));
  }

  @Override
  public String toString() {
    return "CommunityApi[" + transport.baseUrl + ", key hidden]";
  }

  private static Map<String, String> gradeQuery(int gradeId) {
    return Map.of("gradeId", Integer.toString(gradeId));
  }
}
