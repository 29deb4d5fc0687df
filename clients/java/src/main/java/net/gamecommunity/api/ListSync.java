package net.gamecommunity.api;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A cache of one list kept fresh by change (the service's Sync-Token protocol): the first {@link #sync()}
 * reads the whole list in pages, each next one only the rows inserted or changed since the last, and
 * upserts them by key. A row may come twice (at least once, never missed): upserting makes that
 * harmless. When the service answers 410 (rows were deleted since, or the token is from another
 * database), the cache is rebuilt from the whole list. On a filtered list (a grade's players, the
 * active items) a sync sends every changed row, matching or not: the cache drops those that no longer
 * belong.
 *
 * <pre>{@code
 * ListSync<Integer, PlayerSummary> players = api.allPlayersSync();
 * players.start(Duration.ofSeconds(10), r -> getLogger().info(r.changed().size() + " players changed"),
 *     error -> getLogger().warning("players: " + error.getMessage()));
 * PlayerSummary steve = players.rows().get(42); // from any thread
 * }</pre>
 */
public final class ListSync<K, T> {
  /** Rows per page: the service's most. */
  static final int PAGE_ROWS = 1000;
  private static final Pattern NEXT = Pattern.compile("<([^>]*)>\\s*;\\s*rel=\"?next\"?");

  private final HttpCommunityApi api;
  private final Route route;
  private final Map<String, String> query;
  private final Function<T, K> key;
  private final Predicate<T> keep;
  private final Map<K, T> rows = new ConcurrentHashMap<>();
  private volatile String token;
  private CompletableFuture<Result<T>> running;

  /**
   * What one sync brought.
   *
   * @param full true when the whole list was read: the first sync, or after a 410
   * @param changed the rows received (on a full sync, every row), already in the cache
   */
  public record Result<T>(boolean full, List<T> changed) {}

  ListSync(HttpCommunityApi api, Route route, Map<String, String> query, Function<T, K> key, Predicate<T> keep) {
    this.api = api;
    this.route = route;
    this.query = query;
    this.key = key;
    this.keep = keep;
  }

  /** @return the cache, by key: a live, read-only view, safe to read from any thread */
  public Map<K, T> rows() {
    return Collections.unmodifiableMap(rows);
  }

  /** @return the Sync-Token of the last sync, to keep across restarts with the rows; null before the first */
  @Nullable
  public String token() {
    return token;
  }

  /**
   * Resumes from a token kept with the rows of an earlier run (both as this cache last had them):
   * the next sync asks only for what changed since.
   *
   * @param token the Sync-Token saved with the rows
   * @param rows the rows saved
   */
  public void resume(String token, Iterable<T> rows) {
    synchronized (this) {
      if (running != null && !running.isDone()) throw new IllegalStateException("a sync is running");
      this.rows.clear();
      for (T row : rows) this.rows.put(key.apply(row), row);
      this.token = Objects.requireNonNull(token, "token");
    }
  }

  /**
   * One sync. A failure (an {@link ApiException}) leaves the cache and its token as they were. Called
   * while one runs, it returns the running one: syncs never overlap.
   *
   * @return what the sync brought
   */
  public synchronized CompletableFuture<Result<T>> sync() {
    // Done but not yet cleared (its clearing runs on the executor, after the caller may have seen it end).
    if (running != null && !running.isDone()) return running;
    String since = token;
    // Read on the client's threads; the plugin's callbacks once, on the callback executor.
    CompletableFuture<Result<T>> sync = api.bind(since == null
        ? read(null, true)
        : read(since, false).exceptionallyCompose(failure -> {
          ApiException e = ApiException.unwrap(failure);
          return e.status() == 410 ? read(null, true) : CompletableFuture.failedFuture(e);
        }));
    running = sync;
    sync.whenComplete((result, failure) -> {
      synchronized (this) {
        if (running == sync) running = null;
      }
    });
    return sync;
  }

  /**
   * Syncs now, then {@code every} after each sync ends, until the subscription or the client is closed.
   * {@code onSync} gets each result and {@code onError} each failed sync (syncing goes on), both on the
   * client's callback executor when the builder was given one (the game's main thread, say), else on the
   * client's own threads: then hop to the main thread for game API calls.
   * After a failed sync the loop waits the failure's {@code Retry-After} instead when it is longer (a
   * 429, 502, 503 or 504), and while the rate budget is spent ({@link CommunityApi#rateLimit()}) until it renews.
   *
   * @param every the wait between the end of a sync and the next one
   * @param onSync gets each sync's result
   * @param onError gets each failed sync
   * @return the running loop: close it to stop
   * @throws NullPointerException when {@code every}, {@code onSync} or {@code onError} is null
   */
  public ListPoller.Subscription start(Duration every, Consumer<Result<T>> onSync, Consumer<ApiException> onError) {
    Objects.requireNonNull(every, "every");
    Objects.requireNonNull(onSync, "onSync");
    Objects.requireNonNull(onError, "onError");
    ListPoller.Subscription subscription = new ListPoller.Subscription(api.transport::isClosed);
    api.schedule(() -> syncAndReschedule(subscription, every, onSync, onError), Duration.ZERO, subscription);
    return subscription;
  }

  private void syncAndReschedule(ListPoller.Subscription s, Duration every, Consumer<Result<T>> onSync, Consumer<ApiException> onError) {
    if (s.isClosed()) return;
    sync().whenComplete((result, failure) -> {
      if (s.isClosed()) return;
      try {
        if (failure != null) api.transport.callback("the onError listener of ListSync.start", () -> onError.accept(ApiException.unwrap(failure)));
        else api.transport.callback("the onSync listener of ListSync.start", () -> onSync.accept(result));
      } finally {
        api.schedule(() -> syncAndReschedule(s, every, onSync, onError), api.nextDelay(every, failure), s);
      }
    });
  }

  /** Reads every page, and only then applies them. */
  private CompletableFuture<Result<T>> read(String since, boolean full) {
    return pages(since, null, new ArrayList<>()).thenApply(walk -> {
      // A full read replaces the cache without emptying it first: a reader meanwhile sees old rows or new ones, never none.
      if (full) rows.keySet().retainAll(walk.received.stream().map(key).collect(Collectors.toSet()));
      for (T row : walk.received) rows.put(key.apply(row), row);
      if (keep != null) rows.values().removeIf(keep.negate());
      token = walk.token;
      return new Result<>(full, List.copyOf(walk.received));
    });
  }

  private record Walk<T>(List<T> received, String token) {}

  private CompletableFuture<Walk<T>> pages(String since, String cursor, List<T> received) {
    Map<String, String> page = new HashMap<>(query);
    page.put("limit", Integer.toString(PAGE_ROWS));
    if (since != null) page.put("since", since);
    if (cursor != null) page.put("cursor", cursor);
    return api.<List<T>>send(route, page, null, Map.of(), true).thenCompose(answer -> {
      received.addAll(answer.body());
      String next = nextCursor(answer.uri(), answer.link());
      if (next != null) return pages(since, next, received);
      if (answer.syncToken() == null) {
        return CompletableFuture.failedFuture(new ApiException(ApiException.Kind.INVALID_RESPONSE, answer.status(),
            route.method + " " + route.path + " answered without a Sync-Token", null, null, null, null));
      }
      return CompletableFuture.completedFuture(new Walk<>(received, answer.syncToken()));
    });
  }

  /** The cursor of the Link header's rel="next" URL (relative to the URL asked); null on the last page. */
  static String nextCursor(URI asked, String link) {
    if (link == null) return null;
    Matcher m = NEXT.matcher(link);
    if (!m.find()) return null;
    String rawQuery = asked.resolve(m.group(1)).getRawQuery();
    if (rawQuery == null) return null;
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0 && pair.substring(0, eq).equals("cursor")) return URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
    }
    return null;
  }
}
