package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The client of the game community API. Create one per plugin (at enable), share it, and
 * {@link #close()} it at disable. Every call returns a {@link CompletableFuture} completed on the
 * client's executor, never on the calling thread; {@link #blocking()} offers the same calls for
 * threads that may wait. A failed call completes with an {@link ApiException}.
 *
 * <pre>{@code
 * CommunityApi api = CommunityApi.builder("https://api.example.org/api", apiKey).build();
 * api.getPlayerByNick("Steve").thenAccept(p -> log.info(p.pseudo() + " has " + p.credit() + " credits"));
 * }</pre>
 */
public final class CommunityApi implements AutoCloseable {
  static final String API_KEY = "X-API-Key";
  static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  static final String IF_NONE_MATCH = "If-None-Match";
  static final String IF_MATCH = "If-Match";
  static final String ETAG = "ETag";
  static final String REQUEST_ID = "X-Request-Id";
  static final String RETRY_AFTER = "Retry-After";
  static final String VERSION = "1.0.0";

  private final HttpClient http;
  private final String baseUrl;
  private final String apiKey;
  private final String userAgent;
  private final Duration requestTimeout;
  private final RetryPolicy retryPolicy;
  private final Executor executor;
  private final ExecutorService ownedExecutor;
  private final ScheduledExecutorService scheduler;
  private volatile boolean closed;
  private final Set<EventSubscription> subscriptions = ConcurrentHashMap.newKeySet();

  private CommunityApi(Builder b) {
    this.baseUrl = b.baseUrl;
    this.apiKey = b.apiKey;
    String client = "game-community-api-java/" + VERSION + " (Java " + Runtime.version().feature() + ")";
    this.userAgent = b.product == null ? client : b.product + " " + client;
    this.requestTimeout = b.requestTimeout;
    this.retryPolicy = b.retryPolicy;
    this.ownedExecutor = b.executor == null ? Executors.newCachedThreadPool(daemonThreads("community-api")) : null;
    this.executor = b.executor == null ? ownedExecutor : b.executor;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemonThreads("community-api-poller"));
    // The service speaks HTTP/1.1; the default (HTTP/2) would add an h2c upgrade to every plain-http request.
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(b.connectTimeout)
        .executor(executor)
        .build();
  }

  /** @param baseUrl the API's address, with its {@code /api} prefix: {@code https://api.example.org/api} */
  public static Builder builder(String baseUrl, String apiKey) {
    return new Builder(baseUrl, apiKey);
  }

  // ---- players

  /** Every player of a grade, in full (token, ip and connection times included). */
  public CompletableFuture<List<FullPlayer>> getAllFullPlayersByGradeId(int gradeId) {
    return body(send(Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId), null, Map.of(), true));
  }

  public CompletableFuture<List<PlayerSummary>> getAllPlayers() {
    return body(send(Route.ALL_PLAYERS, Map.of(), null, Map.of(), true));
  }

  /** The player whose pseudo, else nickname, is {@code nick}, regardless of case; {@link ApiException.Kind#NOT_FOUND} if none. */
  public CompletableFuture<PlayerSummary> getPlayerByNick(String nick) {
    return body(send(Route.PLAYER_BY_NICK, Map.of("nick", Objects.requireNonNull(nick, "nick")), null, Map.of(), true));
  }

  // ---- cosmetics

  public CompletableFuture<Cosmetic> getCosmetic(int id) {
    return getCosmeticTagged(id).thenApply(Tagged::value);
  }

  /** The cosmetic with its ETag, for a safe update ({@link CosmeticUpdate.Builder#ifMatch}). */
  public CompletableFuture<Tagged<Cosmetic>> getCosmeticTagged(int id) {
    return this.<Cosmetic>send(Route.GET_COSMETIC, Map.of("id", Integer.toString(id)), null, Map.of(), true)
        .thenApply(a -> new Tagged<>(a.body(), a.etag()));
  }

  /** Applies the change and returns the whole cosmetic after it, with its new ETag. */
  public CompletableFuture<Tagged<Cosmetic>> updateCosmetic(CosmeticUpdate update) {
    Map<String, String> headers = update.ifMatch == null ? Map.of() : Map.of(IF_MATCH, update.ifMatch);
    return this.<Cosmetic>send(Route.UPDATE_COSMETIC, Map.of(), update.body, headers, update.retry)
        .thenApply(a -> new Tagged<>(a.body(), a.etag()));
  }

  // ---- writes that create

  public CompletableFuture<Created<FormAnswer>> createForm(NewFormAnswer answer) {
    return createForm(answer, newIdempotencyKey());
  }

  /**
   * With your own Idempotency-Key: keep it (e.g. in the plugin's storage) to resend the same request
   * after a restart; the service records it once within 24 hours.
   */
  public CompletableFuture<Created<FormAnswer>> createForm(NewFormAnswer answer, String idempotencyKey) {
    return create(Route.CREATE_FORM, answer, idempotencyKey);
  }

  public CompletableFuture<Created<RewardLog>> createRewardLog(NewRewardLog log) {
    return createRewardLog(log, newIdempotencyKey());
  }

  public CompletableFuture<Created<RewardLog>> createRewardLog(NewRewardLog log, String idempotencyKey) {
    return create(Route.CREATE_REWARD_LOG, log, idempotencyKey);
  }

  /**
   * Registers an API user and returns its key, shown only this once. A replay of this request (a retry
   * whose first attempt got through) is a {@link ApiException.Kind#CONFLICT}: the key is not kept.
   */
  public CompletableFuture<Created<RegisteredUser>> register(NewApiUser user) {
    return register(user, newIdempotencyKey());
  }

  public CompletableFuture<Created<RegisteredUser>> register(NewApiUser user, String idempotencyKey) {
    return create(Route.INSCRIPTION, user, idempotencyKey);
  }

  // ---- other resources

  public CompletableFuture<List<InfectedStats>> getAllInfectedStats() {
    return body(send(Route.ALL_INFECTED_STATS, Map.of(), null, Map.of(), true));
  }

  /** Items active now ({@code startDate <= now < endDate}). */
  public CompletableFuture<List<TemporaryItem>> getActiveItems() {
    return body(send(Route.ACTIVE_ITEMS, Map.of(), null, Map.of(), true));
  }

  public CompletableFuture<FreebuildWorld> updateWorld(WorldUpdate update) {
    return body(send(Route.UPDATE_WORLD, Map.of(), update.body, Map.of(), update.retry));
  }

  public CompletableFuture<List<ParkourMap>> getAllMaps() {
    return body(send(Route.ALL_MAPS, Map.of(), null, Map.of(), true));
  }

  // ---- conditional polling

  public ListPoller<FullPlayer> fullPlayersByGradeIdPoller(int gradeId) {
    return new ListPoller<>(this, Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId));
  }

  public ListPoller<PlayerSummary> allPlayersPoller() {
    return new ListPoller<>(this, Route.ALL_PLAYERS, Map.of());
  }

  public ListPoller<InfectedStats> infectedStatsPoller() {
    return new ListPoller<>(this, Route.ALL_INFECTED_STATS, Map.of());
  }

  public ListPoller<TemporaryItem> activeItemsPoller() {
    return new ListPoller<>(this, Route.ACTIVE_ITEMS, Map.of());
  }

  public ListPoller<ParkourMap> mapsPoller() {
    return new ListPoller<>(this, Route.ALL_MAPS, Map.of());
  }

  // ---- caches kept in sync by change

  /** The players, by id. */
  public ListSync<Integer, PlayerSummary> allPlayersSync() {
    return new ListSync<>(this, Route.ALL_PLAYERS, Map.of(), PlayerSummary::id, null);
  }

  /** A grade's players in full, by id; a player whose grade changed leaves the cache. */
  public ListSync<Integer, FullPlayer> fullPlayersByGradeIdSync(int gradeId) {
    return new ListSync<>(this, Route.FULL_PLAYERS_BY_GRADE, gradeQuery(gradeId), FullPlayer::id, p -> p.gradeId() == gradeId);
  }

  /** The infected statistics, by player id. */
  public ListSync<Integer, InfectedStats> infectedStatsSync() {
    return new ListSync<>(this, Route.ALL_INFECTED_STATS, Map.of(), InfectedStats::playerId, null);
  }

  /** The active items, by id; an item leaves the cache at its end (checked on each sync, on this machine's clock). */
  public ListSync<String, TemporaryItem> activeItemsSync() {
    return new ListSync<>(this, Route.ACTIVE_ITEMS, Map.of(), TemporaryItem::id, item -> {
      Instant now = Instant.now();
      return !item.startDate().isAfter(now) && now.isBefore(item.endDate());
    });
  }

  /** The parkour maps, by id. */
  public ListSync<Integer, ParkourMap> mapsSync() {
    return new ListSync<>(this, Route.ALL_MAPS, Map.of(), ParkourMap::id, null);
  }

  /**
   * The API's writes as they commit (GET /api/events), to {@code listener} on the client's executor, in
   * order; reconnects and resumes by itself (see {@link EventSubscription}). {@code types}: the event types
   * ({@code reward_log.created}, …), empty for every type this API user may see. Closed by
   * {@link EventSubscription#close()} or by {@link #close()}.
   */
  public EventSubscription subscribe(Collection<String> types, EventListener listener) {
    return subscribe(types, null, listener);
  }

  /** The same, resuming after the event of id {@code lastEventId} (the last one handled before a restart). */
  public EventSubscription subscribe(Collection<String> types, String lastEventId, EventListener listener) {
    if (closed) throw new IllegalStateException("this CommunityApi is closed");
    EventSubscription subscription = new EventSubscription(http, baseUrl, apiKey, userAgent, executor, scheduler,
        List.copyOf(types), lastEventId, Objects.requireNonNull(listener, "listener"), subscriptions::remove);
    subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  /** The same calls, waiting for the answer: for threads that may block, never a game's main thread. */
  public Blocking blocking() {
    return new Blocking(this);
  }

  /** Stops the pollers and the client's own threads; calls made afterwards fail at once. */
  @Override
  public void close() {
    closed = true;
    subscriptions.forEach(EventSubscription::close);
    scheduler.shutdownNow();
    if (ownedExecutor != null) ownedExecutor.shutdown();
  }

  @Override
  public String toString() {
    return "CommunityApi[" + baseUrl + ", key hidden]";
  }

  // ---- the request pipeline

  /** One answer of a route: its body (null for a 304) and the headers a caller or a helper may need (syncToken and link on lists only). */
  record Answer<T>(int status, T body, String etag, boolean replayed, String syncToken, String link, URI uri) {
    boolean notModified() {
      return status == 304;
    }
  }

  private static Map<String, String> gradeQuery(int gradeId) {
    return Map.of("gradeId", Integer.toString(gradeId));
  }

  private static String newIdempotencyKey() {
    return UUID.randomUUID().toString();
  }

  private static <T> CompletableFuture<T> body(CompletableFuture<Answer<T>> answer) {
    return answer.thenApply(Answer::body);
  }

  private <T> CompletableFuture<Created<T>> create(Route route, Record request, String idempotencyKey) {
    Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    return this.<T>send(route, Map.of(), StrictJson.encode(request), Map.of(IDEMPOTENCY_KEY, idempotencyKey), true)
        .thenApply(a -> new Created<>(a.body(), a.replayed(), idempotencyKey));
  }

  @SuppressWarnings("unchecked")
  <T> CompletableFuture<Answer<T>> send(Route route, Map<String, String> query, JsonObject body, Map<String, String> headers, boolean retryable) {
    if (closed) return CompletableFuture.failedFuture(new IllegalStateException("this CommunityApi is closed"));
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(route, query))
        .timeout(requestTimeout)
        .header(API_KEY, apiKey)
        .header("User-Agent", userAgent)
        .header("Accept", "application/json")
        .method(route.method, body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
    if (body != null) request.header("Content-Type", "application/json");
    headers.forEach(request::header);
    // Decoded and completed on the client's executor: the JDK's HttpClient completes its futures on the
    // common pool (a new thread per answer on a host of one or two cores), where callers' callbacks would run.
    return attempt(request.build(), retryable ? retryPolicy : RetryPolicy.NONE, 1)
        .thenApplyAsync(response -> (Answer<T>) answer(route, response), this::complete);
  }

  /** Runs an answer's completion on the executor; once closed, refused work fails as "closed". */
  private void complete(Runnable task) {
    try {
      executor.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      if (closed) throw new IllegalStateException("this CommunityApi is closed", e);
      throw e;
    }
  }

  private CompletableFuture<HttpResponse<String>> attempt(HttpRequest request, RetryPolicy policy, int attempt) {
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
        .handle((response, failure) -> {
          Duration wait;
          if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            // Closed while in flight: the HttpClient's executor (the client's) refuses to finish the exchange.
            if (closed) return CompletableFuture.<HttpResponse<String>>failedFuture(new IllegalStateException("this CommunityApi is closed", cause));
            if (!(cause instanceof IOException)) return CompletableFuture.<HttpResponse<String>>failedFuture(cause);
            wait = policy.delayAfter(attempt, null);
            if (wait == null) return CompletableFuture.<HttpResponse<String>>failedFuture(network(request, attempt, cause));
          } else {
            int status = response.statusCode();
            if (status != 429 && status != 503) return CompletableFuture.completedFuture(response);
            wait = policy.delayAfter(attempt, retryAfter(response));
            if (wait == null) return CompletableFuture.completedFuture(response);
          }
          if (closed) return CompletableFuture.<HttpResponse<String>>failedFuture(new IllegalStateException("this CommunityApi is closed"));
          Executor later = CompletableFuture.delayedExecutor(wait.toMillis(), TimeUnit.MILLISECONDS, executor);
          return CompletableFuture.supplyAsync(() -> null, later).thenCompose(x -> attempt(request, policy, attempt + 1));
        })
        .thenCompose(f -> f);
  }

  private static ApiException network(HttpRequest request, int attempts, Throwable cause) {
    String what = cause instanceof java.net.http.HttpTimeoutException ? "timed out" : "failed (" + cause + ")";
    return new ApiException(ApiException.Kind.NETWORK, 0,
        request.method() + " " + request.uri().getPath() + " " + what + " after " + attempts + " attempt(s)", null, null, cause);
  }

  private static Object answer(Route route, HttpResponse<String> response) {
    int status = response.statusCode();
    String requestId = response.headers().firstValue(REQUEST_ID).orElse(null);
    String etag = response.headers().firstValue(ETAG).orElse(null);
    if (status == 304) return new Answer<>(status, null, etag, false, null, null, response.uri());
    if (status < 200 || status > 299) throw error(route, response, requestId);
    try {
      Object body = StrictJson.decode(response.body(), route.response);
      boolean replayed = response.headers().firstValue(IDEMPOTENT_REPLAYED).map("true"::equalsIgnoreCase).orElse(false);
      String syncToken = response.headers().firstValue(ListSync.SYNC_TOKEN).orElse(null);
      String link = response.headers().firstValue("Link").orElse(null);
      return new Answer<>(status, body, etag, replayed, syncToken, link, response.uri());
    } catch (StrictJson.DecodingException e) {
      throw new ApiException(ApiException.Kind.INVALID_RESPONSE, status,
          route.method + " " + route.path + " answered a body this client cannot read: " + e.getMessage(), requestId, null, e);
    }
  }

  private static ApiException error(Route route, HttpResponse<String> response, String requestId) {
    int status = response.statusCode();
    String message;
    try {
      ApiError error = (ApiError) StrictJson.decode(response.body(), ApiError.class);
      message = error.code() == status ? error.message() : "HTTP " + status + " with an error body of code " + error.code() + ": " + error.message();
    } catch (StrictJson.DecodingException e) {
      message = "HTTP " + status + " from " + route.method + " " + route.path + " without the API's error body";
    }
    // Every route this client calls exists: a 404 naming no route means the base URL is not the service's /api.
    if (status == 404 && message.startsWith("No route ")) {
      return new ApiException(ApiException.Kind.OTHER_STATUS, status, message + " (is the base URL right? it is the service's address ending with /api)", requestId, null, null);
    }
    return new ApiException(ApiException.Kind.of(status), status, message, requestId, retryAfter(response), null);
  }

  /** Retry-After as seconds or as an HTTP date (RFC 9110); absent or unreadable gives null. */
  static Duration retryAfter(HttpResponse<?> response) {
    Optional<String> value = response.headers().firstValue(RETRY_AFTER).map(String::trim);
    if (value.isEmpty()) return null;
    try {
      return Duration.ofSeconds(Math.max(0, Long.parseLong(value.get())));
    } catch (NumberFormatException notSeconds) {
      try {
        Duration until = Duration.between(Instant.now(), ZonedDateTime.parse(value.get(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        return until.isNegative() ? Duration.ZERO : until;
      } catch (DateTimeParseException notDate) {
        return null;
      }
    }
  }

  private URI uri(Route route, Map<String, String> query) {
    String encoded = query.isEmpty() ? "" : "?" + query.entrySet().stream()
        .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8).replace("+", "%20"))
        .collect(Collectors.joining("&"));
    return URI.create(baseUrl + route.path + encoded);
  }

  void schedule(Runnable task, Duration delay, ListPoller.Subscription subscription) {
    if (closed || subscription.isClosed()) return;
    try {
      subscription.next(scheduler.schedule(() -> executor.execute(task), delay.toMillis(), TimeUnit.MILLISECONDS));
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      subscription.close();
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /** How to reach the API; only the base URL and the key are required. */
  public static final class Builder {
    private final String baseUrl;
    private final String apiKey;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration requestTimeout = Duration.ofSeconds(15);
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private Executor executor;
    private String product;

    private Builder(String baseUrl, String apiKey) {
      String url = Objects.requireNonNull(baseUrl, "baseUrl").replaceAll("/+$", "");
      URI parsed = URI.create(url);
      if (!"http".equals(parsed.getScheme()) && !"https".equals(parsed.getScheme())) {
        throw new IllegalArgumentException("baseUrl: expected an http or https URL, such as https://api.example.org/api");
      }
      if (Objects.requireNonNull(apiKey, "apiKey").isBlank()) throw new IllegalArgumentException("apiKey: empty");
      this.baseUrl = url;
      this.apiKey = apiKey;
    }

    /** Longest wait to open a connection (5 s by default). */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /** Longest wait for each attempt's answer (15 s by default); retries get a fresh one. */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Where answers are decoded and futures completed (by default the client's own daemon threads,
     * ended by {@link CommunityApi#close()}). Never pass a game's main-thread executor.
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** Your plugin's name and version, e.g. {@code "MyPlugin/2.1"}, sent before the client's own in User-Agent. */
    public Builder userAgent(String userAgent) {
      this.product = Objects.requireNonNull(userAgent, "userAgent");
      return this;
    }

    public CommunityApi build() {
      return new CommunityApi(this);
    }

    private static Duration positive(Duration d, String name) {
      if (Objects.requireNonNull(d, name).isNegative() || d.isZero()) throw new IllegalArgumentException(name + ": expected more than 0");
      return d;
    }
  }

  /** {@link CommunityApi}'s calls, waiting for their answers; each throws {@link ApiException}. */
  public static final class Blocking {
    private final CommunityApi api;

    private Blocking(CommunityApi api) {
      this.api = api;
    }

    public List<FullPlayer> getAllFullPlayersByGradeId(int gradeId) { return await(api.getAllFullPlayersByGradeId(gradeId)); }
    public List<PlayerSummary> getAllPlayers() { return await(api.getAllPlayers()); }
    public PlayerSummary getPlayerByNick(String nick) { return await(api.getPlayerByNick(nick)); }
    public Cosmetic getCosmetic(int id) { return await(api.getCosmetic(id)); }
    public Tagged<Cosmetic> getCosmeticTagged(int id) { return await(api.getCosmeticTagged(id)); }
    public Tagged<Cosmetic> updateCosmetic(CosmeticUpdate update) { return await(api.updateCosmetic(update)); }
    public Created<FormAnswer> createForm(NewFormAnswer answer) { return await(api.createForm(answer)); }
    public Created<FormAnswer> createForm(NewFormAnswer answer, String idempotencyKey) { return await(api.createForm(answer, idempotencyKey)); }
    public List<InfectedStats> getAllInfectedStats() { return await(api.getAllInfectedStats()); }
    public List<TemporaryItem> getActiveItems() { return await(api.getActiveItems()); }
    public Created<RewardLog> createRewardLog(NewRewardLog log) { return await(api.createRewardLog(log)); }
    public Created<RewardLog> createRewardLog(NewRewardLog log, String idempotencyKey) { return await(api.createRewardLog(log, idempotencyKey)); }
    public Created<RegisteredUser> register(NewApiUser user) { return await(api.register(user)); }
    public Created<RegisteredUser> register(NewApiUser user, String idempotencyKey) { return await(api.register(user, idempotencyKey)); }
    public FreebuildWorld updateWorld(WorldUpdate update) { return await(api.updateWorld(update)); }
    public List<ParkourMap> getAllMaps() { return await(api.getAllMaps()); }

    /**
     * Waits for a future of this client; its ApiException is thrown with the calling thread's stack
     * trace (the original's is the client's own threads', which says nothing of where it was called).
     */
    public static <T> T await(CompletableFuture<T> future) {
      try {
        return future.join();
      } catch (CompletionException e) {
        throw ApiException.unwrap(e).inCallersThread();
      }
    }
  }
}
