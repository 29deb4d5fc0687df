package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Supplier;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * What every view of one client shares: the HTTP client, the threads, the calls in flight, the rate
 * budget last seen ({@link RateBudget}), and their lifecycle. One request goes through {@link #send}:
 * built with the client's headers and tracked, then handed to an {@link Exchange} (its attempts, retries
 * and decoding); {@link #close} fails it with {@link ApiException.Kind#CLOSED} (or its answer). Another
 * file of this package sending its own kind of request (a stream, say) uses {@link #newRequest}.
 */
final class Transport {
  final String baseUrl;
  final String apiKey;
  final String userAgent;
  final RetryPolicy retryPolicy;
  final boolean strictDecoding;
  final Executor executor;
  private final ExecutorService ownedExecutor;
  private final ClientThreads poolThreads;
  private final ClientThreads timerThreads;
  final ClientLog log;
  final ScheduledExecutorService scheduler;
  final HttpClient http;
  final RateBudget rateBudget = new RateBudget();
  private final Exchange.Shared exchanges;
  private final InFlight inFlight = new InFlight();
  private volatile boolean closed;
  /** The plugin's trace context, read on the calling thread (Builder.traceContext); null: none sent. */
  private final Supplier<? extends Map<String, String>> traceContext;

  Transport(String baseUrl, String apiKey, String userAgent, Duration connectTimeout, Duration requestTimeout,
      RetryPolicy retryPolicy, Executor executor, boolean strictDecoding, ClientLog log, String threadPrefix, int maxConcurrentRequests,
      Supplier<? extends Map<String, String>> traceContext) {
    this.baseUrl = baseUrl;
    this.traceContext = traceContext;
    this.log = log;
    this.poolThreads = new ClientThreads(threadPrefix);
    this.timerThreads = new ClientThreads(threadPrefix + "-timer");
    this.apiKey = apiKey;
    this.userAgent = userAgent;
    this.retryPolicy = retryPolicy;
    this.strictDecoding = strictDecoding;
    this.ownedExecutor = executor == null ? Executors.newCachedThreadPool(poolThreads) : null;
    // Marked, so that blocking() knows it would wait on a thread the answer may need (BlockingCalls).
    this.executor = ClientThreads.marking(executor == null ? ownedExecutor : executor);
    this.scheduler = Executors.newSingleThreadScheduledExecutor(timerThreads);
    // The service speaks HTTP/1.1; the default (HTTP/2) would add an h2c upgrade to every plain-http request.
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(connectTimeout)
        .executor(this.executor)
        .build();
    this.exchanges = new Exchange.Shared(http, requestTimeout, this.executor, scheduler, this::isClosed, rateBudget, strictDecoding,
        new Permits(maxConcurrentRequests));
  }

  boolean isClosed() {
    return closed;
  }

  /** {@code d}, when it is more than 0; else IllegalArgumentException naming it. */
  static Duration positive(Duration d, String name) {
    if (Objects.requireNonNull(d, name).isNegative() || d.isZero()) throw new IllegalArgumentException(name + ": expected more than 0");
    return d;
  }

  /**
   * Runs a plugin's callback; what it throws is logged as a warning (and does not stop the loop that called it).
   *
   * @param what the callback, as the warning names it ("the listener of ListPoller.start (onChange)")
   */
  void callback(String what, Runnable callback) {
    try {
      callback.run();
    } catch (RuntimeException failed) {
      log.log(ClientLog.Level.WARNING, what + " threw " + failed + "; the client goes on (a bug of the plugin to fix)", failed);
    }
  }

  // ---- one request

  /** A request with the client's headers (key, User-Agent), for this package's own kinds of request. */
  HttpRequest.Builder newRequest(URI uri) {
    return HttpRequest.newBuilder(uri).header(Headers.API_KEY, apiKey).header("User-Agent", userAgent);
  }

  /**
   * Sends a request of a route, retrying it per the policy (or once), and completes the future it returns
   * on the client's threads, its failures included: an internal future, which {@link HttpCommunityApi#bind}
   * hands to the plugin bound to its callback executor.
   *
   * @param deadline the latest moment to give an answer (no retry would end after it), or null
   */
  @SuppressWarnings("unchecked")
  <T> CompletableFuture<Answer<T>> send(Route route, Map<String, String> query, JsonObject body, Map<String, String> headers,
      boolean retryable, Instant deadline) {
    CompletableFuture<Answer<T>> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(Failures.closed(null));
      return result;
    }
    HttpRequest.Builder request = newRequest(uri(route, query))
        .header("Accept", "application/json")
        .method(route.method, body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
    if (body != null) request.header("Content-Type", "application/json");
    headers.forEach(request::header);
    if (traceContext != null) TraceHeaders.add(traceContext, request, log);
    InFlight.Call call = inFlight.track(result, !"GET".equals(route.method));
    if (closed) {
      // close() may have looked at the calls in flight before this one came in.
      result.completeExceptionally(Failures.closed(null));
      return result;
    }
    Exchange exchange = new Exchange(exchanges, route, request, retryable ? retryPolicy : RetryPolicy.NONE, deadline, call,
        (CompletableFuture<Answer<?>>) (CompletableFuture<?>) result);
    exchange.attempt(1);
    return result;
  }

  URI uri(Route route, Map<String, String> query) {
    String encoded = query.isEmpty() ? "" : "?" + query.entrySet().stream()
        .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8).replace("+", "%20"))
        .collect(Collectors.joining("&"));
    return URI.create(baseUrl + route.path + encoded);
  }

  /** Runs {@code task} on the executor after {@code delay}, unless the subscription or the client is closed by then. */
  void schedule(Runnable task, Duration delay, ListPoller.Subscription subscription) {
    if (closed || subscription.isClosed()) return;
    try {
      ScheduledFuture<?> next = scheduler.schedule(() -> {
        try {
          executor.execute(task);
        } catch (RejectedExecutionException closing) {
          subscription.close();
        }
      }, delay.toMillis(), TimeUnit.MILLISECONDS);
      subscription.next(next);
    } catch (RejectedExecutionException closing) {
      subscription.close();
    }
  }

  // ---- close

  /**
   * Refuses new calls, lets writes in flight get their answers (retries included) until {@code grace} has
   * passed, then ends every call still pending, on this thread ({@link InFlight#close}), and ends the client's threads.
   */
  void close(Duration grace) {
    closed = true;
    inFlight.close(grace);
    scheduler.shutdownNow();
    // The callbacks of the calls just failed were queued to the executor: they run here rather than never.
    if (ownedExecutor != null) for (Runnable queued : ownedExecutor.shutdownNow()) queued.run();
    // Java 21's HttpClient can be stopped (its selector thread with it); Java 17's stops once unreachable.
    try {
      HttpClient.class.getMethod("shutdownNow").invoke(http);
    } catch (ReflectiveOperationException | RuntimeException notJava21) {
      // nothing to do
    }
    // Their tasks were interrupted: the threads end as soon as those return (within the bound, on a busy machine).
    long deadline = System.nanoTime() + THREADS_END_WITHIN.toNanos();
    try {
      timerThreads.join(deadline);
      poolThreads.join(deadline);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** How long {@link #close} waits for the client's threads to end: a callback that ignores interruption may hold one. */
  private static final Duration THREADS_END_WITHIN = Duration.ofSeconds(5);
}
