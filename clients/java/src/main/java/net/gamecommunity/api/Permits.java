package net.gamecommunity.api;

import java.util.ArrayDeque;
import java.util.Queue;

/**
 * The client's bound on requests in flight (and so on its connections, one a request over HTTP/1.1):
 * {@link CommunityApi.Builder#maxConcurrentRequests}. An attempt past the bound waits, in the order it came,
 * until one in flight ends; its permit passes to the next. The event stream's connections are not counted.
 */
final class Permits {
  private final int limit;
  private final Queue<Runnable> waiting = new ArrayDeque<>();
  private int used;

  Permits(int limit) {
    this.limit = limit;
  }

  /** Runs {@code attempt} now if a permit is free, else once one is; the attempt must {@link #release} it when it ends. */
  void run(Runnable attempt) {
    synchronized (this) {
      if (used >= limit) {
        waiting.add(attempt);
        return;
      }
      used++;
    }
    attempt.run();
  }

  /** An attempt ended: its permit goes to the first waiting, or back. */
  void release() {
    Runnable next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        used--;
        return;
      }
    }
    next.run();
  }

  /** @return the attempts waiting for a permit */
  synchronized int waiting() {
    return waiting.size();
  }
}
