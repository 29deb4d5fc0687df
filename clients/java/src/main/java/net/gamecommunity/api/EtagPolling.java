package net.gamecommunity.api;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What {@link ListPoller} and {@link LeaderboardPoller} do: poll one route with the ETag of the last answer delivered
 * (If-None-Match), deliver only a changed answer, and loop.
 *
 * @param <B> what the route answers
 */
final class EtagPolling<B> {
  private final HttpCommunityApi api;
  private final Route route;
  private final Map<String, String> query;
  /** The public class, as the warnings about its callbacks name it. */
  private final String owner;
  private volatile String etag;

  EtagPolling(HttpCommunityApi api, Route route, Map<String, String> query, String owner) {
    this.api = api;
    this.route = route;
    this.query = query;
    this.owner = owner;
  }

  CompletableFuture<Optional<B>> poll() {
    return api.bind(api.<B>send(route, query, null, etag == null ? Map.of() : Map.of(Headers.IF_NONE_MATCH, etag), true)
        .thenApply(answer -> {
          if (answer.notModified()) return Optional.empty();
          etag = answer.etag();
          return Optional.of(answer.body());
        }));
  }

  Optional<String> etag() {
    return Optional.ofNullable(etag);
  }

  ListPoller.Subscription start(Duration every, Consumer<B> onChange, Consumer<ApiException> onError) {
    Objects.requireNonNull(every, "every");
    Objects.requireNonNull(onChange, "onChange");
    Objects.requireNonNull(onError, "onError");
    ListPoller.Subscription subscription = new ListPoller.Subscription(api.transport::isClosed);
    api.schedule(() -> pollAndReschedule(subscription, every, onChange, onError), Duration.ZERO, subscription);
    return subscription;
  }

  private void pollAndReschedule(ListPoller.Subscription s, Duration every, Consumer<B> onChange, Consumer<ApiException> onError) {
    if (s.isClosed()) return;
    poll().whenComplete((changed, failure) -> {
      if (s.isClosed()) return;
      try {
        if (failure != null) api.transport.callback("the onError listener of " + owner + ".start", () -> onError.accept(ApiException.unwrap(failure)));
        else changed.ifPresent(body -> api.transport.callback("the onChange listener of " + owner + ".start", () -> onChange.accept(body)));
      } finally {
        api.schedule(() -> pollAndReschedule(s, every, onChange, onError), api.nextDelay(every, failure), s);
      }
    });
  }
}
