package net.gamecommunity.api;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The calls of one client not yet completed, and how closing ends them: a call whose answer came is
 * completed with it (on the closing thread, if the callback executor has not run its completion yet: it
 * may be that very thread, blocked in close); a write that may have reached the service fails with
 * {@link ApiException.Kind#OUTCOME_UNKNOWN}; any other call with {@link ApiException.Kind#CLOSED}.
 */
final class InFlight {
  /** One call: its future, whether it writes, what runs for it now (an attempt or a wait), and its answer once known. */
  static final class Call {
    final CompletableFuture<?> future;
    final boolean write;
    volatile Future<?> pending;
    /** An attempt is on its way: the service may be recording it. */
    volatile boolean attempting;
    /** An attempt ended without saying that nothing was written (no answer, a 502, a 504…). */
    volatile boolean maybeRecorded;
    /** Completed on the client's thread once the answer is decoded, with what completes {@link #future}. */
    final CompletableFuture<Runnable> settled = new CompletableFuture<>();

    Call(CompletableFuture<?> future, boolean write) {
      this.future = future;
      this.write = write;
    }

    /** An attempt ended with this status (0: no answer). 429 and 503 are the service's word that it wrote nothing. */
    void attempted(int status) {
      attempting = false;
      if (status != 429 && status != 503) maybeRecorded = true;
    }

    /** What a call ended by closing fails with. */
    ApiException closedFailure(Throwable cause) {
      if (write && (attempting || maybeRecorded)) {
        return new ApiException(ApiException.Kind.OUTCOME_UNKNOWN, 0, "this CommunityApi was closed before the service answered"
            + " the write: it may have been recorded or not (send it again with the same Idempotency-Key to know)", null, null, null, cause);
      }
      return Failures.closed(cause);
    }

    /** Completes the future with its answer if it came, else fails it as closing does. */
    void end() {
      Runnable answer = settled.getNow(null);
      if (answer != null) {
        answer.run();
        return;
      }
      Future<?> running = pending;
      if (running != null) running.cancel(false);
      future.completeExceptionally(closedFailure(null));
    }
  }

  private final Set<Call> calls = ConcurrentHashMap.newKeySet();

  /** Tracks a call until its future completes. */
  Call track(CompletableFuture<?> future, boolean write) {
    Call call = new Call(future, write);
    calls.add(call);
    future.whenComplete((x, y) -> calls.remove(call));
    return call;
  }

  /**
   * Ends every call: with {@code grace}, first ends the reads, then waits up to {@code grace} on this thread
   * for the writes' answers (not for their completion, which may be queued to this very thread).
   */
  void close(Duration grace) {
    if (!grace.isZero() && !grace.isNegative()) {
      List<Call> writes = calls.stream().filter(c -> c.write).toList();
      calls.stream().filter(c -> !c.write).forEach(Call::end);
      try {
        CompletableFuture.allOf(writes.stream().map(c -> CompletableFuture.anyOf(c.settled, c.future)).toArray(CompletableFuture[]::new)).get(grace.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception stillRunning) {
        // ended below
      }
    }
    for (Call c : calls) c.end();
  }
}
