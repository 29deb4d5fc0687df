package net.gamecommunity.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Polls one list route with the ETag of the last list it delivered (If-None-Match): an unchanged list
 * comes back as an empty 304, costs the service little, and is not delivered again.
 */
public final class ListPoller<T> {
  private final EtagPolling<List<T>> polling;

  ListPoller(HttpCommunityApi api, Route route, Map<String, String> query) {
    this.polling = new EtagPolling<>(api, route, query, "ListPoller");
  }

  /** @return one poll: the list if it changed since the last one delivered (or on the first poll), else empty */
  public CompletableFuture<Optional<List<T>>> poll() {
    return polling.poll();
  }

  /** @return the ETag of the last list delivered, if any */
  public Optional<String> etag() {
    return polling.etag();
  }

  /**
   * Polls now, then {@code every} after each poll ends, until the subscription or the client is closed.
   * {@code onChange} gets each changed list and {@code onError} each failed poll (polling goes on),
   * both on the client's callback executor when the builder was given one (the game's main thread, say),
   * else on the client's own threads: then hop to the main thread for game API calls.
   * After a failed poll the loop waits the failure's {@code Retry-After} instead when it is longer (a
   * 429, 502, 503 or 504), and while the rate budget is spent ({@link CommunityApi#rateLimit()}) until it renews.
   *
   * @param every the wait between the end of a poll and the next one
   * @param onChange gets each changed list
   * @param onError gets each failed poll
   * @return the running loop: close it to stop
   * @throws NullPointerException when {@code every}, {@code onChange} or {@code onError} is null
   */
  public Subscription start(Duration every, Consumer<List<T>> onChange, Consumer<ApiException> onError) {
    return polling.start(every, onChange, onError);
  }

  /** A running poll loop; close it to stop. */
  public static final class Subscription implements AutoCloseable {
    private final BooleanSupplier clientClosed;
    private volatile boolean closed;
    private volatile ScheduledFuture<?> next;

    /** Made by the client when polling starts. */
    Subscription(BooleanSupplier clientClosed) {
      this.clientClosed = clientClosed;
    }

    void next(ScheduledFuture<?> future) {
      next = future;
      if (closed) future.cancel(false);
    }

    /** Stops the loop: no poll starts after this (one running ends, its result unreported). */
    @Override
    public void close() {
      closed = true;
      ScheduledFuture<?> pending = next;
      if (pending != null) pending.cancel(false);
    }

    /** @return true once closed, by {@link #close()} or with the client */
    public boolean isClosed() {
      return closed || clientClosed.getAsBoolean();
    }
  }

}
