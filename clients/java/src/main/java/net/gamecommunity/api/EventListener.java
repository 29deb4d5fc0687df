package net.gamecommunity.api;

/**
 * What a subscription ({@link CommunityApi#subscribe}) calls, always on the client's executor, one call at a
 * time and in the stream's order. Never on a game's main thread: hand the work over to it (Bukkit's
 * scheduler) where the game's state is touched.
 */
@FunctionalInterface
public interface EventListener {
  /**
   * An event, in commit order; each once, across reconnections.
   *
   * @param event the event
   */
  void onEvent(Event event);

  /**
   * The subscription stopped for good: a refusal no reconnection changes ({@link ApiException} of status 401,
   * 403 for a type this API user may not see, 410 when the resume point is past the retention: reload your
   * data, then subscribe without it). Not called when you close it. By default, nothing.
   *
   * @param reason the refusal
   */
  default void onStopped(ApiException reason) {}

  /**
   * The connection ended and another is made after {@code delayMillis}. By default, nothing.
   *
   * @param reason why the connection ended
   * @param delayMillis the wait before the next connection, in milliseconds (Retry-After when the service gave one)
   */
  default void onReconnecting(Throwable reason, long delayMillis) {}
}
