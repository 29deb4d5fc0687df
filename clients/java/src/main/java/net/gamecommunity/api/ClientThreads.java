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
