package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A live subscription to the API's events (GET /api/events, server-sent events), made by
 * {@link CommunityApi#subscribe}. It reconnects by itself, to whichever instance answers, resuming after the
 * last event it received (Last-Event-ID): no event is lost nor delivered twice across reconnections. It
 * Made without a saved id, it asks for the events since {@code subscribe()} was called until the stream gives it a
 * position, so that none written while the service could not be reached is missed (the service's clock decides:
 * keep the game server's in time). It waits the Retry-After of a 429 or 503, otherwise the server's {@code retry:} hint, then jittered backoff
 * while failures repeat; 30 s without a byte (the server sends a heartbeat every 10 s) counts as a dead
 * connection. A refusal no reconnection changes (401, 403, 410) stops it ({@link EventListener#onStopped}).
 * {@link #close()} stops it; so does {@link CommunityApi#close()}.
 */
public final class EventSubscription implements AutoCloseable {
  private static final long IDLE_TIMEOUT_MS = 30_000;
  private static final long MAX_DELAY_MS = 30_000;

  private final Transport transport;
  private final URI uri;
  private final Executor executor;
  private final EventListener listener;
  private final Consumer<EventSubscription> onClose;
  private final Object lock = new Object();
  private volatile boolean closed;
  /** The position after the last event whose listener returned: what {@link #lastEventId()} tells. */
  private volatile String lastEventId;
  /** The position after the last event received (maybe still with the listener): where a reconnection resumes. */
  private String received;
  /**
   * Made without an id: when subscribe() was called. Until the stream gives a position, each connection asks for
   * the events since then ({@code startAt=}), so that none written while the service could not be reached is missed.
   */
  private final Instant subscribedAt;
  private long retryMillis = 2_000;
  private int failures;
  /** Which connection is current: the callbacks of an older one (cut for idleness) are ignored. */
  private int generation;
  private volatile long lastByteAt;
  private Flow.Subscription body;
  private CompletableFuture<?> exchange;
  private Future<?> timer;
  /** The listener's calls, chained: one at a time, in order, on the executor. */
  private CompletableFuture<Void> delivered = CompletableFuture.completedFuture(null);

  EventSubscription(Transport transport, Executor executor, Collection<String> types, String lastEventId, EventListener listener,
      Consumer<EventSubscription> onClose) {
    this.transport = transport;
    this.uri = URI.create(transport.baseUrl + "/events" + (types == null || types.isEmpty() ? ""
        : "?types=" + URLEncoder.encode(String.join(",", types), StandardCharsets.UTF_8)));
    this.executor = executor;
    this.lastEventId = lastEventId;
    this.received = lastEventId;
    this.subscribedAt = lastEventId == null ? Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS) : null;
    this.listener = listener;
    this.onClose = onClose;
  }

  /**
   * The id to save at disable and pass to {@link CommunityApi#subscribe(Collection, String, EventListener)} at
   * the next start: it passes an event only once {@link EventListener#onEvent} returned for it (or threw),
   * so resuming after it never skips the event being handled.
   *
   * @return the id of the last event handled (or the position the server sent before any), or the id the
   *     subscription was made with; null when it was made without one and the server sent none yet
   */
  @Nullable
  public String lastEventId() {
    return lastEventId;
  }

  /**
   * Whether it stopped.
   *
   * @return true once closed, by you, by {@link CommunityApi#close()}, or by a refusal (before {@link EventListener#onStopped})
   */
  public boolean isClosed() {
    return closed;
  }

  /** Stops the subscription: the connection is closed, and the listener is not called again. */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) return;
      closed = true;
      generation++;
      cutConnection();
    }
    onClose.accept(this);
  }

  void start() {
    connect();
  }

  private void connect() {
    int current;
    HttpRequest.Builder request;
    synchronized (lock) {
      if (closed) return;
      current = ++generation;
      String resumeAfter = received;
      request = transport.newRequest(resumeAfter != null || subscribedAt == null ? uri
              : URI.create(uri + (uri.getRawQuery() == null ? "?" : "&") + "startAt=" + URLEncoder.encode(subscribedAt.toString(), StandardCharsets.UTF_8)))
          .header("Accept", "text/event-stream").GET();
      if (resumeAfter != null) request.header(Headers.LAST_EVENT_ID, resumeAfter);
      lastByteAt = System.currentTimeMillis();
      timer = every(() -> checkIdle(current));
      exchange = transport.http.sendAsync(request.build(), info -> info.statusCode() == 200
              ? HttpResponse.BodySubscribers.fromLineSubscriber(new EventStream(new Connection(current)), lines -> "", StandardCharsets.UTF_8, null)
              : HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8))
          .whenComplete((response, error) -> ended(current, response, error));
    }
  }

  /** A connection ended: stop for good, or reconnect after the right wait. */
  private void ended(int connection, HttpResponse<String> response, Throwable error) {
    // A stream that ended well ends once its last line is read (EventStream.onComplete), not when the body is received.
    if (error == null && response != null && response.statusCode() == 200) return;
    Duration wait = null;
    Throwable reason = error;
    synchronized (lock) {
      if (closed || connection != generation) return;
      generation++; // the same end, also told by another path (the exchange, the lines, the idle timer), is ignored
      cutConnection();
    }
    if (response != null && response.statusCode() != 200) {
      ApiException refusal = Failures.streamRefusal(response);
      int status = response.statusCode();
      if (status == 400 || status == 401 || status == 403 || status == 404 || status == 410) {
        stop(refusal);
        return;
      }
      reason = refusal;
      wait = refusal.retryAfter().orElse(null);
    }
    long delay;
    synchronized (lock) {
      failures++;
      delay = wait != null ? wait.toMillis()
          : failures == 1 ? retryMillis
          : (long) (ThreadLocalRandom.current().nextDouble() * Math.min(MAX_DELAY_MS, retryMillis << Math.min(failures - 1, 10)));
    }
    Throwable told = reason;
    transport.log.log(ClientLog.Level.DEBUG, "the community API's event stream is reconnecting in " + delay + " ms: " + reason, null);
    deliver(() -> listener.onReconnecting(told, delay));
    try {
      transport.scheduler.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException clientClosed) {
      close();
    }
  }

  /** Closed first, so that the listener, told next, sees {@link #isClosed()} true. */
  private void stop(ApiException reason) {
    close();
    transport.log.log(ClientLog.Level.WARNING, "the community API's event stream " + uri.getRawPath()
        + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()) + " stopped for good: " + reason.getMessage() + ". " + whatToDo(reason.status()), null);
    deliver(() -> listener.onStopped(reason));
  }

  /** What an operator does about a refusal that stopped a subscription. */
  static String whatToDo(int status) {
    return switch (status) {
      case 401 -> "The API key was revoked, or rotated and its grace ran out, or it expired: give the plugin the new key"
          + " (an admin prints one with `cli user rotate`), then restart it";
      case 403 -> "This API user may not see some of these event types, or its address is not allowed:"
          + " subscribe to the types its group may see, or ask an admin to allow them";
      case 410 -> "The saved event id is older than the service keeps events, or from another database (a restore):"
          + " reload what the plugin keeps (by sync), then subscribe again without a saved id";
      default -> "The service refused the request itself (a client and a service of different versions?): update the client";
    };
  }

  private void checkIdle(int connection) {
    synchronized (lock) {
      if (closed || connection != generation || System.currentTimeMillis() - lastByteAt < IDLE_TIMEOUT_MS) return;
    }
    // A killed instance leaves no FIN behind: the connection is given up, and another made.
    ended(connection, null, new java.io.IOException("no byte for " + IDLE_TIMEOUT_MS + " ms: connection dead"));
  }

  private Future<?> every(Runnable task) {
    try {
      return transport.scheduler.scheduleWithFixedDelay(task, 1_000, 1_000, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException clientClosed) {
      return CompletableFuture.completedFuture(null);
    }
  }

  /** Under the lock. */
  private void cutConnection() {
    if (timer != null) timer.cancel(false);
    if (body != null) body.cancel();
    if (exchange != null) exchange.cancel(true);
    body = null;
    exchange = null;
    timer = null;
  }

  private CompletableFuture<Void> deliver(Runnable call) {
    synchronized (lock) {
      delivered = delivered.thenRunAsync(() -> transport.callback("the event listener", call), executor).exceptionally(rejected -> null);
      return delivered;
    }
  }

  /** Hands the event to the listener; once it returned (or threw: reported), the resume point passes it. */
  private void handle(Event event, String position) {
    if (closed) return;
    if (event != null) {
      try {
        listener.onEvent(event);
      } catch (RuntimeException failed) {
        // By default onListenerFailed throws it back, and the failure is logged with its event.
        transport.callback("the event listener (onEvent, for " + event + ")", () -> listener.onListenerFailed(event, failed));
      }
    }
    if (position != null) lastEventId = position;
  }

  /** One connection's frames, from its {@link EventStream}: events to the listener, in order; the rest to the lifecycle. */
  private final class Connection implements EventStream.Frames {
    private final int connection;

    Connection(int connection) {
      this.connection = connection;
    }

    @Override
    public boolean opened(Flow.Subscription s) {
      synchronized (lock) {
        if (closed || connection != generation) return false;
        body = s;
      }
      deliver(listener::onConnected);
      return true;
    }

    @Override
    public void alive() {
      lastByteAt = System.currentTimeMillis();
    }

    @Override
    public void retry(long millis) {
      synchronized (lock) {
        retryMillis = millis;
      }
    }

    @Override
    public CompletableFuture<?> frame(String position, String traceparent, List<String> frame) {
      String eventId;
      synchronized (lock) {
        if (closed || connection != generation) return null;
        failures = 0;
        if (position != null) received = position;
        eventId = received;
      }
      if (frame.isEmpty() && position == null) return CompletableFuture.completedFuture(null); // a heartbeat: nothing to hand over
      Event event = null;
      if (!frame.isEmpty()) {
        JsonObject message = StrictJson.parse(String.join("\n", frame)).getAsJsonObject();
        event = new Event(eventId, message.get("type").getAsString(), Instant.parse(message.get("timestamp").getAsString()),
            message.getAsJsonObject("data").toString(), traceparent, transport.strictDecoding);
      }
      // Through the listener's queue even without an event, so that the resume point moves in order. The next
      // line once the listener returned: a listener slower than the stream holds the stream back.
      Event handled = event;
      return deliver(() -> handle(handled, position));
    }

    @Override
    public void ended(Throwable error) {
      EventSubscription.this.ended(connection, null, error);
    }
  }
}
