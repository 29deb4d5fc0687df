package net.gamecommunity.api;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads one client makes (daemons named {@code prefix-N}), known so that {@link #join} can wait for
 * them to end: a pool counts as terminated while its last thread is still returning, so waiting for the
 * pool alone lets a thread outlive {@link CommunityApi#close()}.
 */
final class ClientThreads implements ThreadFactory {
  /** Set while a task of a client's executor runs on this thread (removed after it: nothing stays on a plugin's thread). */
  private static final ThreadLocal<Boolean> RUNNING_A_TASK = new ThreadLocal<>();

  private final String prefix;
  private final AtomicInteger count = new AtomicInteger();
  private final List<Thread> threads = new ArrayList<>();

  ClientThreads(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public Thread newThread(Runnable runnable) {
    Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
    thread.setDaemon(true);
    synchronized (threads) {
      // An idle pool thread ends after a while and another takes its place: only the living are kept.
      threads.removeIf(t -> t.getState() == Thread.State.TERMINATED);
      threads.add(thread);
    }
    return thread;
  }

  /** {@code executor}, its tasks marked as the client's: {@link #inATask} is true while one runs. */
  static java.util.concurrent.Executor marking(java.util.concurrent.Executor executor) {
    return task -> executor.execute(() -> {
      Boolean before = RUNNING_A_TASK.get();
      RUNNING_A_TASK.set(Boolean.TRUE);
      try {
        task.run();
      } finally {
        if (before == null) RUNNING_A_TASK.remove();
      }
    });
  }

  /** @return whether this thread runs a task of a client's executor now (where a wait on a call could wait for itself) */
  static boolean inATask() {
    return RUNNING_A_TASK.get() != null;
  }

  /**
   * Waits until each thread made has ended, but the calling one (a close from a callback), or until
   * {@code deadlineNanos} ({@link System#nanoTime()}): a callback that ignores interruption keeps its thread.
   */
  void join(long deadlineNanos) throws InterruptedException {
    List<Thread> made;
    synchronized (threads) {
      made = List.copyOf(threads);
    }
    for (Thread thread : made) {
      if (thread == Thread.currentThread()) continue;
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) return;
      TimeUnit.NANOSECONDS.timedJoin(thread, left);
    }
  }
}
