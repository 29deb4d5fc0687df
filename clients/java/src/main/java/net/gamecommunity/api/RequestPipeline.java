package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * How {@link HttpCommunityApi}'s calls become requests: each a request of a {@link Route} sent by the {@link Transport},
 * its future completed on the callback executor, an argument it refuses a failed future.
 */
abstract class RequestPipeline {
  final Transport transport;
  /** How long each call may take in all, retries included; null: as long as the retry policy takes. */
  final Duration deadline;
  /** Where futures complete; null: the transport's executor. */
  final Executor callbacks;

  RequestPipeline(Transport transport, Duration deadline, Executor callbacks) {
    this.transport = transport;
    this.deadline = deadline;
    this.callbacks = callbacks;
  }

  <T> CompletableFuture<T> body(CompletableFuture<Answer<T>> answer) {
    return bind(answer.thenApply(Answer::body));
  }

  /** An internal future (completed on the client's threads) as the plugin gets it: its callbacks on the callback executor, one hop. */
  <T> CompletableFuture<T> bind(CompletableFuture<T> internal) {
    return BoundFuture.bind(internal, callbackExecutor());
  }

  /** Where this client's futures complete and its listeners are called. */
  Executor callbackExecutor() {
    return callbacks == null ? transport.executor : callbacks;
  }

  /** Runs a call; an argument it refuses (a null, an invalid value) fails the future instead of the caller. */
  <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (NullPointerException | IllegalArgumentException e) {
      return BoundFuture.failed(new ApiException(ApiException.Kind.INVALID_ARGUMENT, 0, e.getMessage(), null, null, null, e),
          callbackExecutor());
    }
  }

  static <T> T required(T value, String name) {
    return Objects.requireNonNull(value, () -> name + ": null where a value is required");
  }

  <T> CompletableFuture<Created<T>> create(Route route, Record request, String idempotencyKey) {
    return call(() -> {
      JsonObject body = StrictJson.encode(required(request, "request"));
      if (required(idempotencyKey, "idempotencyKey").isBlank()) throw new IllegalArgumentException("idempotencyKey: empty");
      return bind(this.<T>send(route, Map.of(), body, Map.of(Headers.IDEMPOTENCY_KEY, idempotencyKey), true)
          .thenApply(a -> new Created<>(a.body(), a.replayed(), idempotencyKey)));
    });
  }

  /** The request, as an internal future: {@link #bind} it before a plugin sees it. */
  <T> CompletableFuture<Answer<T>> send(Route route, Map<String, String> query, JsonObject body, Map<String, String> headers, boolean retryable) {
    return transport.send(route, query, body, headers, retryable, deadline == null ? null : Instant.now().plus(deadline));
  }

  /** Runs {@code task} on the executor after {@code delay}, unless the subscription or the client is closed by then. */
  void schedule(Runnable task, Duration delay, ListPoller.Subscription subscription) {
    transport.schedule(task, delay, subscription);
  }

  /** The wait before a loop's next request: {@code every}, or longer after a 429 or 503, or while the rate budget is spent. */
  Duration nextDelay(Duration every, Throwable failure) {
    return transport.rateBudget.nextDelay(every, failure);
  }
}
