package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What every view of one client shares: the HTTP client, the threads, the calls in flight, the rate
 * budget last seen. One request goes through {@link #send}: retried per the policy and Retry-After,
 * decoded on the executor, completed on the caller's chosen executor, and failed with
 * {@link ApiException.Kind#CLOSED} (or its answer) by {@link #close}. Another file of this package sending its own
 * kind of request (a stream, say) uses {@link #newRequest} and {@link #retryAfter}.
 */
final class Transport {
  static final String API_KEY = "X-API-Key";
  static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  static final String IF_NONE_MATCH = "If-None-Match";
  static final String IF_MATCH = "If-Match";
  static final String ETAG = "ETag";
  static final String REQUEST_ID = "X-Request-Id";
  static final String RETRY_AFTER = "Retry-After";
  static final String ERROR_NAME = "Error-Name";
  static final String RATE_LIMIT = "RateLimit";
  static final String RATE_LIMIT_POLICY = "RateLimit-Policy";
  private static final Pattern REMAINING = Pattern.compile("(?:^|;)\\s*r\\s*=\\s*(\\d+)");
  private static final Pattern RESET = Pattern.compile("(?:^|;)\\s*t\\s*=\\s*(\\d+)");
  private static final Pattern QUOTA = Pattern.compile("(?:^|;)\\s*q\\s*=\\s*(\\d+)");

  final String baseUrl;
  final String apiKey;
  final String userAgent;
  private final Duration requestTimeout;
  final RetryPolicy retryPolicy;
  final boolean strictDecoding;
  final Executor executor;
  private final ExecutorService ownedExecutor;
  final ScheduledExecutorService scheduler;
  final HttpClient http;
  private final InFlight inFlight = new InFlight();
  private volatile boolean closed;
  private volatile RateLimit rateLimit;

  Transport(String baseUrl, String apiKey, String userAgent, Duration connectTimeout, Duration requestTimeout,
      RetryPolicy retryPolicy, Executor executor, boolean strictDecoding) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.userAgent = userAgent;
    this.requestTimeout = requestTimeout;
    this.retryPolicy = retryPolicy;
    this.strictDecoding = strictDecoding;
    this.ownedExecutor = executor == null ? Executors.newCachedThreadPool(daemonThreads("community-api")) : null;
    this.executor = executor == null ? ownedExecutor : executor;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemonThreads("community-api-timer"));
    // The service speaks HTTP/1.1; the default (HTTP/2) would add an h2c upgrade to every plain-http request.
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(connectTimeout)
        .executor(this.executor)
        .build();
  }

  boolean isClosed() {
    return closed;
  }

  Optional<RateLimit> rateLimit() {
    return Optional.ofNullable(rateLimit);
  }

  // ---- one request

  /** One answer of a route: its body (null for a 304) and the headers a caller or a helper may need (syncToken and link on lists only). */
  record Answer<T>(int status, T body, String etag, boolean replayed, String syncToken, String link, URI uri) {
    boolean notModified() {
      return status == 304;
    }
  }

  /** A request with the client's headers (key, User-Agent), for this package's own kinds of request. */
  HttpRequest.Builder newRequest(URI uri) {
    return HttpRequest.newBuilder(uri).header(API_KEY, apiKey).header("User-Agent", userAgent);
  }

  /**
   * Sends a request of a route, retrying it per the policy (or once), and completes the future it
   * returns on {@code callbacks} (the client's executor when null), its failures included.
   *
   * @param deadline the latest moment to give an answer (no retry would end after it), or null
   */
  @SuppressWarnings("unchecked")
  <T> CompletableFuture<Answer<T>> send(Route route, Map<String, String> query, JsonObject body, Map<String, String> headers,
      boolean retryable, Instant deadline, Executor callbacks) {
    CompletableFuture<Answer<T>> result = new BoundFuture<>(callbacks == null ? executor : callbacks);
    if (closed) {
      result.completeExceptionally(closedException(null));
      return result;
    }
    HttpRequest.Builder request = newRequest(uri(route, query))
        .header("Accept", "application/json")
        .method(route.method, body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
    if (body != null) request.header("Content-Type", "application/json");
    headers.forEach(request::header);
    InFlight.Call call = inFlight.track(result, !"GET".equals(route.method));
    if (closed) {
      // close() may have looked at the calls in flight before this one came in.
      result.completeExceptionally(closedException(null));
      return result;
    }
    Exchange exchange = new Exchange(route, request, retryable ? retryPolicy : RetryPolicy.NONE, deadline, call,
        (CompletableFuture<Answer<?>>) (CompletableFuture<?>) result, callbacks == null ? executor : callbacks);
    exchange.attempt(1);
    return result;
  }

  /** One call's attempts: each answer or failure either schedules the next attempt or settles the call. */
  private final class Exchange {
    final Route route;
    final HttpRequest.Builder request;
    final RetryPolicy policy;
    final Instant deadline;
    final InFlight.Call call;
    final CompletableFuture<Answer<?>> result;
    final Executor callbacks;

    Exchange(Route route, HttpRequest.Builder request, RetryPolicy policy, Instant deadline, InFlight.Call call,
        CompletableFuture<Answer<?>> result, Executor callbacks) {
      this.route = route;
      this.request = request;
      this.policy = policy;
      this.deadline = deadline;
      this.call = call;
      this.result = result;
      this.callbacks = callbacks;
    }

    void attempt(int attempt) {
      if (result.isDone()) return;
      Duration timeout = requestTimeout;
      if (deadline != null) {
        Duration left = Duration.between(Instant.now(), deadline);
        if (left.compareTo(timeout) < 0) timeout = left.isNegative() || left.isZero() ? Duration.ofMillis(1) : left;
      }
      HttpRequest built = request.copy().timeout(timeout).build();
      CompletableFuture<HttpResponse<String>> sent;
      try {
        sent = http.sendAsync(built, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      } catch (RuntimeException e) {
        settle(null, closed ? closedException(e) : unexpected(e));
        return;
      }
      call.attempting = true;
      call.pending = sent;
      sent.whenComplete((response, failure) -> {
        call.attempted(response == null ? 0 : response.statusCode());
        if (result.isDone()) return;
        if (response != null) noteRateLimit(response);
        Duration wait;
        if (failure != null) {
          Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
          if (closed) {
            settle(null, call.closedFailure(cause));
            return;
          }
          if (!(cause instanceof IOException)) {
            settle(null, unexpected(cause));
            return;
          }
          wait = policy.delayAfter(attempt, null);
          if (wait == null || beyondDeadline(wait)) {
            settle(null, network(built, attempt, cause));
            return;
          }
        } else {
          int status = response.statusCode();
          wait = retried(status) ? policy.delayAfter(attempt, retryAfter(response)) : null;
          if (wait == null || beyondDeadline(wait)) {
            settle(response, null);
            return;
          }
        }
        try {
          call.pending = scheduler.schedule(() -> attempt(attempt + 1), wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
          settle(null, call.closedFailure(e));
        }
      });
    }

    private boolean beyondDeadline(Duration wait) {
      return deadline != null && Instant.now().plus(wait).isAfter(deadline);
    }

    /** Decodes the answer on the executor, then completes the call on the callbacks' executor. */
    private void settle(HttpResponse<String> response, ApiException failure) {
      run(executor, () -> {
        Answer<?> answer = null;
        ApiException error = failure;
        if (error == null) {
          try {
            answer = answer(route, response);
          } catch (ApiException e) {
            error = e;
          } catch (RuntimeException e) {
            error = unexpected(e);
          }
        }
        Answer<?> a = answer;
        ApiException f = error;
        Runnable complete = () -> {
          if (f != null) result.completeExceptionally(f);
          else result.complete(a);
        };
        // Known now: close() completes the call with it if the callbacks' executor has not yet.
        call.settled.complete(complete);
        if (callbacks == executor) complete.run();
        else run(callbacks, complete);
      });
    }

    private void run(Executor on, Runnable task) {
      try {
        on.execute(task);
      } catch (RuntimeException e) {
        // A shut-down executor refuses (so does Bukkit's scheduler for a disabled plugin): the answer, if it
        // came, completes the call here; else it fails at once, on this thread, rather than never.
        Runnable answer = call.settled.getNow(null);
        if (answer != null) answer.run();
        else result.completeExceptionally(closed ? call.closedFailure(e) : unexpected(e));
      }
    }
  }

  /** Completes {@code future} with {@code failure} on {@code on} (for failures found before any request is sent). */
  static <T> CompletableFuture<T> failLater(ApiException failure, Executor on) {
    CompletableFuture<T> future = new BoundFuture<>(on);
    BoundFuture.orInline(on).execute(() -> future.completeExceptionally(failure));
    return future;
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
    try {
      scheduler.awaitTermination(1, TimeUnit.SECONDS);
      if (ownedExecutor != null) ownedExecutor.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static ApiException closedException(Throwable cause) {
    return new ApiException(ApiException.Kind.CLOSED, 0, "this CommunityApi is closed", null, null, null, cause);
  }

  private static ApiException unexpected(Throwable cause) {
    return new ApiException(ApiException.Kind.UNEXPECTED, 0, String.valueOf(cause), null, null, null, cause);
  }

  // ---- answers

  private static String hostAndPort(URI uri) {
    int port = uri.getPort() != -1 ? uri.getPort() : "https".equals(uri.getScheme()) ? 443 : 80;
    return uri.getHost() + ":" + port;
  }

  private static ApiException network(HttpRequest request, int attempts, Throwable cause) {
    String what = cause instanceof HttpTimeoutException ? "timed out" : "failed (" + cause + ")";
    return new ApiException(ApiException.Kind.NETWORK, 0, request.method() + " " + request.uri().getPath() + " to "
        + hostAndPort(request.uri()) + " " + what + " after " + attempts + " attempt(s)", null, null, null, cause);
  }

  private Answer<?> answer(Route route, HttpResponse<String> response) {
    int status = response.statusCode();
    String requestId = response.headers().firstValue(REQUEST_ID).orElse(null);
    String etag = response.headers().firstValue(ETAG).orElse(null);
    if (status == 304) return new Answer<>(status, null, etag, false, null, null, response.uri());
    if (status < 200 || status > 299) throw error(route, response, requestId);
    try {
      Object body = StrictJson.decode(response.body(), route.response, strictDecoding);
      boolean replayed = response.headers().firstValue(IDEMPOTENT_REPLAYED).map("true"::equalsIgnoreCase).orElse(false);
      String syncToken = response.headers().firstValue(ListSync.SYNC_TOKEN).orElse(null);
      String link = response.headers().firstValue("Link").orElse(null);
      return new Answer<>(status, body, etag, replayed, syncToken, link, response.uri());
    } catch (StrictJson.DecodingException e) {
      throw new ApiException(ApiException.Kind.INVALID_RESPONSE, status,
          route.method + " " + route.path + " answered a body this client cannot read: " + e.getMessage(), requestId, null, null, e);
    }
  }

  private static ApiException error(Route route, HttpResponse<String> response, String requestId) {
    int status = response.statusCode();
    String name = response.headers().firstValue(ERROR_NAME).map(String::trim).filter(s -> !s.isEmpty()).orElse(null);
    String message;
    try {
      ApiError error = (ApiError) StrictJson.decode(response.body(), ApiError.class, false);
      message = error.code() == status ? error.message() : "HTTP " + status + " with an error body of code " + error.code() + ": " + error.message();
    } catch (StrictJson.DecodingException e) {
      message = "HTTP " + status + " from " + route.method + " " + route.path + " without the API's error body";
    }
    // Every route this client calls exists: a 404 naming no route means the base URL is not the service's /api.
    boolean noRoute = "ROUTE_NOT_FOUND".equals(name) || name == null && message.startsWith("No route ");
    if (status == 404 && noRoute) {
      return new ApiException(ApiException.Kind.OTHER_STATUS, status, message + " (is the base URL right? it is the service's address ending with /api)", requestId, null, name, null);
    }
    return new ApiException(ApiException.Kind.of(status), status, message, requestId, retryAfter(response), name, null);
  }

  /** The statuses a retryable call is sent again after: 429 and the 5xx that mean "not now" (a proxy's 502 and 504, the service's 503). */
  static boolean retried(int status) {
    return status == 429 || status == 502 || status == 503 || status == 504;
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

  /** Keeps the rate budget the service reported (RateLimit: {@code "user"; r=599; t=42}), if it did. */
  void noteRateLimit(HttpResponse<?> response) {
    Optional<String> header = response.headers().firstValue(RATE_LIMIT);
    if (header.isEmpty()) return;
    Matcher r = REMAINING.matcher(header.get());
    Matcher t = RESET.matcher(header.get());
    if (!r.find() || !t.find()) return;
    try {
      int limit = response.headers().firstValue(RATE_LIMIT_POLICY).map(QUOTA::matcher).filter(Matcher::find)
          .map(m -> Integer.parseInt(m.group(1))).orElse(-1);
      rateLimit = new RateLimit(Integer.parseInt(r.group(1)), limit, Instant.now().plusSeconds(Long.parseLong(t.group(1))));
    } catch (NumberFormatException outOfRange) {
      // a header this client cannot read is no budget
    }
  }

  /**
   * How long a loop (poller, sync) waits before its next request: {@code every}, or longer when the
   * last failure asked for it (Retry-After of a 429 or 503) or when the rate budget is spent until
   * its window ends.
   */
  Duration nextDelay(Duration every, Throwable failure) {
    Duration wait = every;
    if (failure != null) {
      ApiException e = ApiException.unwrap(failure);
      if (retried(e.status()) && e.retryAfter().isPresent() && e.retryAfter().get().compareTo(wait) > 0) {
        wait = e.retryAfter().get();
      }
    }
    RateLimit budget = rateLimit;
    if (budget != null && budget.remaining() == 0) {
      Duration untilReset = Duration.between(Instant.now(), budget.resetsAt());
      if (untilReset.compareTo(wait) > 0) wait = untilReset;
    }
    return wait;
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

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
