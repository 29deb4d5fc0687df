package net.gamecommunity.api;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A future whose callbacks always run on one executor, even when attached after it completed: a plain
 * {@link CompletableFuture} runs a callback attached late on the thread attaching it, so a fast answer
 * (or a thread preempted for a moment) would run a plugin's callback on the game's main thread. Every
 * stage derived from it is bound the same way. Once that executor refuses work (the client is closed, or
 * Bukkit's scheduler throws for a plugin being disabled), callbacks run on the thread that completes the
 * stage instead of never.
 */
final class BoundFuture<T> extends CompletableFuture<T> {
  private final Executor executor;

  BoundFuture(Executor executor) {
    this.executor = orInline(executor);
  }

  /** {@code executor}, or the calling thread once it refuses work (it throws rather than run the task). */
  static Executor orInline(Executor executor) {
    return task -> {
      try {
        executor.execute(task);
      } catch (RuntimeException refused) {
        task.run();
      }
    };
  }

  /** A future failed with {@code failure}, bound to {@code on} (for failures found before any request is sent): its callbacks run there. */
  static <T> CompletableFuture<T> failed(ApiException failure, Executor on) {
    CompletableFuture<T> future = new BoundFuture<>(on);
    future.completeExceptionally(failure);
    return future;
  }

  /**
   * {@code internal} (completed on the client's threads), as a future bound to {@code on}: completed on the
   * thread that completes {@code internal}, so that the plugin's own callback is the one task given to {@code on}.
   */
  static <T> CompletableFuture<T> bind(CompletableFuture<T> internal, Executor on) {
    CompletableFuture<T> bound = new BoundFuture<>(on);
    internal.whenComplete((value, failure) -> {
      if (failure == null) bound.complete(value);
      else bound.completeExceptionally(failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null ? failure.getCause() : failure);
    });
    return bound;
  }

  private BoundFuture(Executor wrapped, boolean alreadyWrapped) {
    this.executor = wrapped;
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new BoundFuture<>(executor, true);
  }

  @Override
  public Executor defaultExecutor() {
    return executor;
  }

  @Override
  public <U> CompletableFuture<U> thenApply(Function<? super T, ? extends U> fn) {
    return thenApplyAsync(fn, executor);
  }

  @Override
  public CompletableFuture<Void> thenAccept(Consumer<? super T> action) {
    return thenAcceptAsync(action, executor);
  }

  @Override
  public CompletableFuture<Void> thenRun(Runnable action) {
    return thenRunAsync(action, executor);
  }

  @Override
  public <U, V> CompletableFuture<V> thenCombine(CompletionStage<? extends U> other, BiFunction<? super T, ? super U, ? extends V> fn) {
    return thenCombineAsync(other, fn, executor);
  }

  @Override
  public <U> CompletableFuture<Void> thenAcceptBoth(CompletionStage<? extends U> other, BiConsumer<? super T, ? super U> action) {
    return thenAcceptBothAsync(other, action, executor);
  }

  @Override
  public CompletableFuture<Void> runAfterBoth(CompletionStage<?> other, Runnable action) {
    return runAfterBothAsync(other, action, executor);
  }

  @Override
  public <U> CompletableFuture<U> applyToEither(CompletionStage<? extends T> other, Function<? super T, U> fn) {
    return applyToEitherAsync(other, fn, executor);
  }

  @Override
  public CompletableFuture<Void> acceptEither(CompletionStage<? extends T> other, Consumer<? super T> action) {
    return acceptEitherAsync(other, action, executor);
  }

  @Override
  public CompletableFuture<Void> runAfterEither(CompletionStage<?> other, Runnable action) {
    return runAfterEitherAsync(other, action, executor);
  }

  @Override
  public <U> CompletableFuture<U> thenCompose(Function<? super T, ? extends CompletionStage<U>> fn) {
    return thenComposeAsync(fn, executor);
  }

  @Override
  public <U> CompletableFuture<U> handle(BiFunction<? super T, Throwable, ? extends U> fn) {
    return handleAsync(fn, executor);
  }

  @Override
  public CompletableFuture<T> whenComplete(BiConsumer<? super T, ? super Throwable> action) {
    return whenCompleteAsync(action, executor);
  }

  @Override
  public CompletableFuture<T> exceptionally(Function<Throwable, ? extends T> fn) {
    return exceptionallyAsync(fn, executor);
  }

  @Override
  public CompletableFuture<T> exceptionallyCompose(Function<Throwable, ? extends CompletionStage<T>> fn) {
    return exceptionallyComposeAsync(fn, executor);
  }
}
