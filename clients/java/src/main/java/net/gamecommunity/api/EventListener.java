package net.gamecommunity.api;

/**
 * What a subscription ({@link CommunityApi#subscribe}) calls: one call at a time, in the stream's order, on
 * the client's callback executor when the builder was given one ({@link CommunityApi.Builder#callbackExecutor}:
 * then on the game's main thread, if that is what it runs on), else on the client's executor.
 */
@FunctionalInterface
public interface EventListener {
  /**
   * An event, in commit order; each once, across reconnections. The subscription's
   * {@link EventSubscription#lastEventId()} passes it once this returns, or throws: an exception thrown
   * here goes to {@link #onListenerFailed}, and the event counts as handled (it is not delivered again).
   *
   * @param event the event
   */
  void onEvent(Event event);

  /**
   * {@link #onEvent} threw: the event counts as handled, and the next one comes. By default, throws
   * {@code failure} back, and the client logs it as a warning with the event ({@link ClientLog}); so does
   * anything this method throws.
   *
   * @param event the event whose handling failed
   * @param failure what {@link #onEvent} threw
   */
  default void onListenerFailed(Event event, RuntimeException failure) {
    throw failure;
  }

  /**
   * The subscription stopped for good: a refusal no reconnection changes ({@link ApiException} of status 401,
   * 403 for a type this API user may not see, 410 when the resume point is past the retention: reload your
   * data, then subscribe without it). The subscription is already closed when this is called. Not called
   * when you close it. The client has logged it as a warning already, with what to do ({@link ClientLog});
   * by default, nothing more.
   *
   * @param reason the refusal
   */
  default void onStopped(ApiException reason) {}

  /**
   * The connection ended and another is made after {@code delayMillis}. The client logs it at
   * {@link ClientLog.Level#DEBUG}; by default, nothing more.
   *
   * @param reason why the connection ended
   * @param delayMillis the wait before the next connection, in milliseconds (Retry-After when the service gave one)
   */
  default void onReconnecting(Throwable reason, long delayMillis) {}

  /**
   * A connection opened (the first one, and each reconnection): the events that follow come after those
   * already delivered. For a plugin that wants to reconcile what it keeps (a sync) once the service answers
   * again; by default, nothing.
   */
  default void onConnected() {}
}
