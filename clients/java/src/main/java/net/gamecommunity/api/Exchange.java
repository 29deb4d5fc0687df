package net.gamecommunity.api;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One call's attempts at its request: each attempt gets the request timeout (or what is left of the
 * call's deadline); each answer or failure either schedules the next attempt, per the {@link RetryPolicy}
 * and Retry-After, or settles the call: its answer decoded on the client's executor ({@link Answer#decode}),
 * which completes its future there (the callback executor's one hop is the client's public future's:
 * {@link HttpCommunityApi#bind}). {@link Transport#send} starts one.
 */
final class Exchange {
  /**
   * What every exchange of one client shares, handed over by its {@link Transport}.
   *
   * @param http the HTTP client
   * @param requestTimeout the longest wait for each attempt's answer
   * @param executor where answers are decoded
   * @param scheduler where the waits between attempts run
   * @param closed whether the client is closed
   * @param rateBudget told of every answer's rate headers
   * @param strictDecoding whether an unknown field in an answer fails the call
   * @param permits the bound on attempts in flight
   */
  record Shared(HttpClient http, Duration requestTimeout, Executor executor, ScheduledExecutorService scheduler,
      BooleanSupplier closed, RateBudget rateBudget, boolean strictDecoding, Permits permits) {}

  private final Shared shared;
  private final Route route;
  private final HttpRequest.Builder request;
  private final RetryPolicy policy;
  private final Instant deadline;
  private final InFlight.Call call;
  private final CompletableFuture<Answer<?>> result;

  Exchange(Shared shared, Route route, HttpRequest.Builder request, RetryPolicy policy, Instant deadline, InFlight.Call call,
      CompletableFuture<Answer<?>> result) {
    this.shared = shared;
    this.route = route;
    this.request = request;
    this.policy = policy;
    this.deadline = deadline;
    this.call = call;
    this.result = result;
  }

  /** An attempt, once the client's bound on requests in flight lets it start ({@link Permits}). */
  void attempt(int attempt) {
    if (result.isDone()) return;
    shared.permits().run(() -> start(attempt));
  }

  private void start(int attempt) {
    if (result.isDone()) {
      shared.permits().release();
      return;
    }
    Duration timeout = shared.requestTimeout();
    if (deadline != null) {
      Duration left = Duration.between(Instant.now(), deadline);
      if (left.compareTo(timeout) < 0) timeout = left.isNegative() || left.isZero() ? Duration.ofMillis(1) : left;
    }
    HttpRequest built = request.copy().timeout(timeout).build();
    CompletableFuture<HttpResponse<String>> sent;
    try {
      sent = shared.http().sendAsync(built, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      shared.permits().release();
      settle(null, closed() ? Failures.closed(e) : Failures.unexpected(e));
      return;
    }
    call.attempting = true;
    call.pending = sent;
    sent.whenComplete((response, failure) -> {
      shared.permits().release();
      call.attempted(response == null ? 0 : response.statusCode());
      if (result.isDone()) return;
      if (response != null) shared.rateBudget().note(response);
      Duration wait;
      if (failure != null) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (closed()) {
          settle(null, call.closedFailure(cause));
          return;
        }
        if (!(cause instanceof IOException)) {
          settle(null, Failures.unexpected(cause));
          return;
        }
        wait = policy.delayAfter(attempt, null);
        if (wait == null || beyondDeadline(wait)) {
          settle(null, Failures.network(built, attempt, cause));
          return;
        }
      } else {
        int status = response.statusCode();
        wait = RetryPolicy.retried(status) ? policy.delayAfter(attempt, RetryPolicy.retryAfter(response)) : null;
        if (wait == null || beyondDeadline(wait)) {
          settle(response, null);
          return;
        }
      }
      try {
        call.pending = shared.scheduler().schedule(() -> attempt(attempt + 1), wait.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        settle(null, call.closedFailure(e));
      }
    });
  }

  private boolean closed() {
    return shared.closed().getAsBoolean();
  }

  private boolean beyondDeadline(Duration wait) {
    return deadline != null && Instant.now().plus(wait).isAfter(deadline);
  }

  /** Decodes the answer on the executor, and completes the call there. */
  private void settle(HttpResponse<String> response, ApiException failure) {
    run(shared.executor(), () -> {
      Answer<?> answer = null;
      ApiException error = failure;
      if (error == null) {
        try {
          answer = Answer.decode(route, response, shared.strictDecoding());
        } catch (ApiException e) {
          error = e;
        } catch (RuntimeException e) {
          error = Failures.unexpected(e);
        }
      }
      Answer<?> a = answer;
      ApiException f = error;
      Runnable complete = () -> {
        if (f != null) result.completeExceptionally(f);
        else result.complete(a);
      };
      // Known now: close() completes the call with it if this thread has not yet.
      call.settled.complete(complete);
      complete.run();
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
      else result.completeExceptionally(closed() ? call.closedFailure(e) : Failures.unexpected(e));
    }
  }
}
