package net.gamecommunity.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The client of the game community API. Create one per plugin (at enable) with {@link #builder}, share it, and
 * {@link #close()} it at disable. Every call returns a {@link CompletableFuture} whose callbacks run on the client's
 * executor, or on the callback executor given to the builder, never on the calling thread, failures included;
 * {@link #blocking()} offers the same calls for threads that may wait. A call that returns a future never throws: a
 * failure, an invalid argument too, completes it with an {@link ApiException}. The methods that return no future
 * ({@link #subscribe}, the pollers' and syncs' {@code start}) throw on a {@code null} argument.
 *
 * <p>An interface, so that a plugin's tests can hand the plugin a fake client: implement it (the overloads that add
 * a new Idempotency-Key, the {@code find…} lookups and {@link #getCosmetic} have default implementations over the
 * others), or make one with {@link java.lang.reflect.Proxy} or a mocking library. Pollers, syncs and subscriptions
 * are made by a real client only (point one at a local HTTP server in such tests).
 *
 * <p>Its calls on the API's resources are declared by resource in {@link PlayerCalls}, {@link CosmeticCalls},
 * {@link CreateCalls}, {@link GameCalls} and {@link LeaderboardCalls}, the event stream in {@link EventCalls}; here, the client
 * as a whole.
 *
 * <pre>{@code
 * CommunityApi api = CommunityApi.builder("https://api.example.org/api", apiKey).build();
 * api.getPlayerByNick("Steve").thenAccept(p -> log.info(p.pseudo() + " has " + p.credit() + " credits"));
 * }</pre>
 */
public non-sealed interface CommunityApi extends PlayerCalls, CosmeticCalls, CreateCalls, GameCalls, LeaderboardCalls, EventCalls, AutoCloseable {
  /**
   * @param baseUrl the API's address, with its {@code /api} prefix: {@code https://api.example.org/api}
   * @param apiKey the API user's key ({@code gsk_…}): keep it in the plugin's configuration, never in code
   * @return a builder; only the base URL and the key are required
   * @throws IllegalArgumentException when the URL is not http(s) or the key is blank
   * @throws NullPointerException when an argument is null
   */
  static Builder builder(String baseUrl, String apiKey) {
    return new Builder(baseUrl, apiKey);
  }

  /**
   * The same calls, waiting for the answer: for threads that may block, never a game's main thread. They do not go
   * through the callback executor, so waiting cannot deadlock on it; called on a thread of the client's executor (a
   * callback without a callback executor), each throws {@link IllegalStateException}: it could wait for itself.
   *
   * @return the blocking view of this client
   */
  Blocking blocking();

  /**
   * This client with a deadline for each call: the whole call, retries included, ends by then (the last
   * attempt's timeout is shortened to fit, and no retry starts that would end after it). Shares
   * everything else (threads, connections, closing) with this client: {@code api.withDeadline(Duration.ofSeconds(2))}
   * on the join path.
   *
   * @param deadline how long each call may take in all, more than 0
   * @return a view of this client whose calls end within {@code deadline}
   */
  CommunityApi withDeadline(Duration deadline);

  /**
   * The API user's request budget as the service reported it on the last answer, to spread requests
   * out before a 429 comes; empty before the first answer, or when the service does not limit rates.
   *
   * @return the rate budget last seen
   */
  Optional<RateLimit> rateLimit();

  /**
   * Closes at once: every call not yet answered (in flight, or waiting to retry) fails now, on this thread,
   * with {@link ApiException.Kind#CLOSED}, or {@link ApiException.Kind#OUTCOME_UNKNOWN} for a write the
   * service may have recorded; a call whose answer came is completed with it. Pollers, syncs and
   * subscriptions stop; the client's own threads end before this returns (a callback still running on one is
   * interrupted, and waited for 5 s at most). Calls made afterwards fail with CLOSED. Views of this client
   * ({@link #withDeadline}, {@link #blocking()}) close with it. (The JDK's HttpClient has one selector thread of its
   * own: stopped here on Java 21 and later; on Java 17 it ends once the client is no longer referenced.)
   */
  void close();

  /**
   * Closes after letting the writes in flight (POSTs and PATCHes, their retries included) get their
   * answers for at most {@code grace}, waiting on this thread: for a plugin's disable, so that a reward
   * being recorded is not lost. Reads not yet answered fail at once with {@link ApiException.Kind#CLOSED}.
   * A write answered meanwhile is completed with its answer before this returns, even when this thread is
   * the callback executor's (on a game's main thread, its completion would otherwise wait behind this
   * call). Then as {@link #close()}: a write still unanswered fails with {@link ApiException.Kind#OUTCOME_UNKNOWN}.
   *
   * @param grace the longest wait for writes in flight
   */
  void close(Duration grace);

  /** How to reach the API; only the base URL and the key are required. */
  final class Builder {
    private final String baseUrl;
    private final String apiKey;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration requestTimeout = Duration.ofSeconds(15);
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private Executor executor;
    private Executor callbackExecutor;
    private Duration deadline;
    private boolean strictDecoding;
    private String product;
    private ClientLog log;
    private String threadPrefix = "community-api";
    private int maxConcurrentRequests = 16;
    private java.util.function.Supplier<? extends java.util.Map<String, String>> traceContext;

    private Builder(String baseUrl, String apiKey) {
      String url = Objects.requireNonNull(baseUrl, "baseUrl").replaceAll("/+$", "");
      java.net.URI parsed = java.net.URI.create(url);
      if (!"http".equals(parsed.getScheme()) && !"https".equals(parsed.getScheme())) {
        throw new IllegalArgumentException("baseUrl: expected an http or https URL, such as https://api.example.org/api");
      }
      if (Objects.requireNonNull(apiKey, "apiKey").isBlank()) throw new IllegalArgumentException("apiKey: empty");
      this.baseUrl = url;
      this.apiKey = apiKey;
    }

    /**
     * @param timeout the longest wait to open a connection (5 s by default)
     * @return this builder
     */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = Transport.positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * @param timeout the longest wait for each attempt's answer (15 s by default); retries get a fresh one
     * @return this builder
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = Transport.positive(timeout, "requestTimeout");
      return this;
    }

    /**
     * @param requests the most requests in flight at once (16 by default), and so connections: the others wait, in
     *     the order they were made (a 200-join burst queues, it opens no 200 connections); event streams aside
     * @return this builder
     */
    public Builder maxConcurrentRequests(int requests) {
      if (requests < 1 || requests > 1000) throw new IllegalArgumentException("maxConcurrentRequests: expected 1 to 1000");
      this.maxConcurrentRequests = requests;
      return this;
    }

    /**
     * @param policy when and how long to wait before sending a request again ({@link RetryPolicy#DEFAULT} by default)
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Where requests run, answers are decoded and futures completed (by default the client's own daemon
     * threads, ended by {@link CommunityApi#close()}). Never pass a game's main-thread executor: use
     * {@link #callbackExecutor} for that.
     *
     * @param executor threads that may do I/O and decoding
     * @return this builder
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Where a future's callbacks run, failures included: a plugin's main-thread scheduler, say, so that they
     * may use the game's API directly; one task per callback, the client's own work staying on its threads.
     * Every stage derived from a future ({@code thenApply}, {@code handle}…) runs there too, as do the
     * pollers', syncs' and event listeners' callbacks and {@link DurableWrites}' outcomes: never
     * {@code join()} or {@code get()} one on that thread, it would wait for a task queued behind itself.
     * {@link CommunityApi#blocking()} does not use it, so that waiting there cannot deadlock.
     *
     * <pre>{@code
     * .callbackExecutor(task -> Bukkit.getScheduler().runTask(plugin, task))
     * }</pre>
     *
     * @param callbackExecutor where callbacks run
     * @return this builder
     */
    public Builder callbackExecutor(Executor callbackExecutor) {
      this.callbackExecutor = Objects.requireNonNull(callbackExecutor, "callbackExecutor");
      return this;
    }

    /**
     * A deadline for every call, retries included (none by default: a call takes as long as the retry
     * policy lets it); {@link CommunityApi#withDeadline} sets one for some calls only.
     *
     * @param deadline how long each call may take in all, more than 0
     * @return this builder
     */
    public Builder deadline(Duration deadline) {
      this.deadline = Transport.positive(deadline, "deadline");
      return this;
    }

    /**
     * Fails a call whose answer has a field this client does not know ({@link ApiException.Kind#INVALID_RESPONSE}).
     * Off by default: the service may add fields to its answers (that is not a breaking change), and a
     * deployed plugin must keep working. Turn it on in tests, to learn of new fields.
     *
     * @param strict true to refuse unknown fields
     * @return this builder
     */
    public Builder strictDecoding(boolean strict) {
      this.strictDecoding = strict;
      return this;
    }

    /**
     * @param userAgent your plugin's name and version, e.g. {@code "MyPlugin/2.1"}, sent before the client's own in User-Agent
     * @return this builder
     */
    public Builder userAgent(String userAgent) {
      this.product = Objects.requireNonNull(userAgent, "userAgent");
      return this;
    }

    /**
     * Joins the service's traces to the plugin's (OpenTelemetry, or any W3C Trace Context): on the thread that
     * makes each call, {@code headers} gives the current context's {@code traceparent} (and {@code tracestate}),
     * sent with every attempt of that call; a malformed or missing one is not sent. No dependency on OpenTelemetry:
     * {@code () -> { Map<String, String> m = new HashMap<>(); GlobalOpenTelemetry.getPropagators()
     * .getTextMapPropagator().inject(Context.current(), m, Map::put); return m; }}.
     *
     * @param headers the current trace context's headers (its other keys are ignored); called once per call
     * @return this builder
     */
    public Builder traceContext(java.util.function.Supplier<? extends java.util.Map<String, String>> headers) {
      this.traceContext = Objects.requireNonNull(headers, "headers");
      return this;
    }

    /**
     * @param log where the client says what an operator must know ({@link ClientLog#standard()} by default)
     * @return this builder
     */
    public Builder log(ClientLog log) {
      this.log = Objects.requireNonNull(log, "log");
      return this;
    }

    /**
     * @param prefix the start of the client's thread names, for a thread dump ({@code community-api}), 1-40 of {@code A-Za-z0-9-_.}
     * @return this builder
     */
    public Builder threadNamePrefix(String prefix) {
      if (!Objects.requireNonNull(prefix, "prefix").matches("[A-Za-z0-9._-]{1,40}")) throw new IllegalArgumentException("threadNamePrefix: expected 1 to 40 of A-Z a-z 0-9 - _ .");
      this.threadPrefix = prefix;
      return this;
    }

    /** @return a new client; close it when done */
    public CommunityApi build() {
      String client = "game-community-api-java/" + HttpCommunityApi.VERSION + " (Java " + Runtime.version().feature() + ")";
      String userAgent = product == null ? client : product + " " + client;
      Transport transport = new Transport(baseUrl, apiKey, userAgent, connectTimeout, requestTimeout, retryPolicy, executor, strictDecoding,
          log != null ? log : ClientLog.standard(), threadPrefix, maxConcurrentRequests, traceContext);
      return new HttpCommunityApi(transport, deadline, callbackExecutor);
    }
  }

  /** {@link CommunityApi}'s calls, waiting for their answers; each throws {@link ApiException}. */
  final class Blocking extends BlockingCalls {
    /**
     * The blocking view of a client: {@link CommunityApi#blocking()} makes it; a fake client in a plugin's
     * tests can make its own.
     *
     * @param api the client whose calls to wait for
     */
    public Blocking(CommunityApi api) {
      super(api);
    }

    /**
     * Waits for a future of this client; its ApiException is thrown with the calling thread's stack
     * trace (the original's is the client's own threads', which says nothing of where it was called).
     *
     * @param <T> the value's type
     * @param future a future of this client
     * @return its value
     * @throws ApiException when it failed
     */
    public static <T> T await(CompletableFuture<T> future) {
      return waitFor(future);
    }
  }
}
