package net.gamecommunity.api;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Writes that outlast outages and restarts: each one is saved to a file (its body and its Idempotency-Key),
 * on the client's threads (never the caller's: a game's main thread does no disk I/O), before it is sent, and
 * sent again, with the same key, until the service answers it: a success, or a definite refusal (a 4xx other
 * than 408 and 429). No answer, a 5xx, a 408 or a 429 keeps it, sent again after a growing wait (Retry-After
 * when the service gives one, else 1 s doubling up to {@code maxWait}). One write is sent at a time, in the
 * order they were made. {@link #open} reads what an earlier run left, on the calling thread (onEnable's).
 *
 * <p>The service remembers a key for 24 hours: a write still unanswered after {@code giveUpAfter} (23
 * hours by default) is dropped and reported as failed, rather than risk being recorded twice. A reward
 * without a moment is given the moment it was queued, so that a late resend records when it happened.
 * Every outcome goes to the listener given to {@link #open}, those of earlier runs' writes included.
 *
 * <pre>{@code
 * DurableWrites writes = DurableWrites.open(api, getDataFolder().toPath().resolve("pending-writes"),
 *     outcome -> { if (!outcome.succeeded()) getLogger().warning("not recorded: " + outcome); });
 * writes.createRewardLog(NewRewardLog.now(playerId, rewardId)); // saved now; recorded once the service answers
 * ...
 * writes.close(); // onDisable, before api.close(): what is still pending stays on disk for the next start
 * }</pre>
 */
public final class DurableWrites implements AutoCloseable {
  private static final Duration FIRST_WAIT = Duration.ofSeconds(1);

  private final HttpCommunityApi api;
  private final WriteJournal journal;
  private final Consumer<Outcome> listener;
  private final Duration maxWait;
  private final Duration giveUpAfter;
  private final Deque<Entry> queue = new ArrayDeque<>();
  private final ListPoller.Subscription timer;
  private boolean sending;
  /** The outcomes told so far, chained: one at a time, in order; the same for the saves. */
  private CompletableFuture<Void> told = CompletableFuture.completedFuture(null);
  private CompletableFuture<Void> saving = CompletableFuture.completedFuture(null);
  private int failures;
  private volatile boolean closed;

  /** Which call a write is. */
  public enum Operation {
    /** {@link DurableWrites#createRewardLog}. */
    CREATE_REWARD_LOG,
    /** {@link DurableWrites#createForm}. */
    CREATE_FORM
  }

  /**
   * What became of one write. A saved write that could not be read back has no key nor operation.
   *
   * @param idempotencyKey the key it was sent with; null for a saved write that could not be read
   * @param operation which call it was; null for a saved write that could not be read
   * @param rewardLog what the service recorded, for a {@link Operation#CREATE_REWARD_LOG} that succeeded; else null
   * @param formAnswer what the service recorded, for a {@link Operation#CREATE_FORM} that succeeded; else null
   * @param failure why it was not recorded (a definite refusal, or no answer within {@code giveUpAfter}); null on success
   */
  public record Outcome(@Nullable String idempotencyKey, @Nullable Operation operation, @Nullable RewardLog rewardLog,
      @Nullable FormAnswer formAnswer, @Nullable ApiException failure) {
    /** @return true when the service recorded the write (or had already, on an earlier attempt) */
    public boolean succeeded() {
      return failure == null;
    }
  }

  /** A pending write and its future; not a record, whose equals (JDK ObjectMethods) kept its class loader past a /reload. */
  private static final class Entry {
    final WriteJournal.Saved write;
    final CompletableFuture<Object> result;

    Entry(WriteJournal.Saved write, CompletableFuture<Object> result) {
      this.write = write;
      this.result = result;
    }
  }

  private DurableWrites(HttpCommunityApi api, WriteJournal journal, Consumer<Outcome> listener, Duration maxWait, Duration giveUpAfter) {
    this.api = api;
    this.journal = journal;
    this.listener = listener;
    this.maxWait = maxWait;
    this.giveUpAfter = giveUpAfter;
    this.timer = new ListPoller.Subscription(api.transport::isClosed);
  }

  /**
   * Opens the queue kept in {@code directory} (created if missing; one file per pending write), and
   * starts sending what an earlier run left there.
   *
   * @param api the client to send with; close the queue before it
   * @param directory where pending writes are kept: the plugin's own data folder, say
   * @param listener gets every write's outcome, on the client's callback executor (its own threads without one)
   * @return the open queue
   * @throws IOException when the directory cannot be created or read
   * @throws IllegalArgumentException when {@code api} is not a client made by {@link CommunityApi#builder} (a fake)
   * @throws NullPointerException when an argument is null
   */
  public static DurableWrites open(CommunityApi api, Path directory, Consumer<Outcome> listener) throws IOException {
    return open(api, directory, listener, Duration.ofMinutes(1), Duration.ofHours(23));
  }

  /**
   * {@link #open(CommunityApi, Path, Consumer)} with other waits.
   *
   * @param api the client to send with
   * @param directory where pending writes are kept
   * @param listener gets every write's outcome
   * @param maxWait the longest wait between two attempts at one write (1 minute by default)
   * @param giveUpAfter how long after it was queued a write is dropped if still unanswered (23 hours by
   *     default; more than 24 hours could record it twice, the service forgetting its key)
   * @return the open queue
   * @throws IOException when the directory cannot be created or read
   * @throws IllegalArgumentException when {@code api} is not a client made by {@link CommunityApi#builder}, or a wait is not positive
   * @throws NullPointerException when an argument is null
   */
  public static DurableWrites open(CommunityApi api, Path directory, Consumer<Outcome> listener, Duration maxWait, Duration giveUpAfter)
      throws IOException {
    return open(api, new WriteJournal(Objects.requireNonNull(directory, "directory")), listener, maxWait, giveUpAfter);
  }

  /** On {@code journal}: tests watch its files' writes. */
  static DurableWrites open(CommunityApi api, WriteJournal journal, Consumer<Outcome> listener, Duration maxWait, Duration giveUpAfter)
      throws IOException {
    DurableWrites writes = new DurableWrites(HttpCommunityApi.of(api), journal, Objects.requireNonNull(listener, "listener"),
        Transport.positive(maxWait, "maxWait"), Transport.positive(giveUpAfter, "giveUpAfter"));
    writes.load();
    writes.sendNext();
    return writes;
  }

  /**
   * Saves a reward log, then sends it until answered. Without a moment, it is given this one.
   *
   * @param log the reward
   * @return completed with what the service recorded, or failed when it refused it (never for an outage:
   *     the write waits); failed with {@link ApiException.Kind#CLOSED} if the queue closes first, the write staying saved
   */
  public CompletableFuture<RewardLog> createRewardLog(NewRewardLog log) {
    if (log != null && log.rewardedAt() == null) log = NewRewardLog.at(log.playerId(), log.rewardId(), Instant.now());
    return api.bind(enqueue(Route.CREATE_REWARD_LOG, log).thenApply(RewardLog.class::cast));
  }

  /**
   * Saves a form answer, then sends it until answered.
   *
   * @param answer the form answer
   * @return completed with what the service recorded, or failed when it refused it
   */
  public CompletableFuture<FormAnswer> createForm(NewFormAnswer answer) {
    return api.bind(enqueue(Route.CREATE_FORM, answer).thenApply(FormAnswer.class::cast));
  }

  /** @return how many saved writes wait for an answer (those of earlier runs included) */
  public synchronized int pending() {
    return queue.size();
  }

  /**
   * Stops sending: the writes not yet answered stay on disk, sent again when a queue is next opened on
   * this directory (recorded once, by their key, even one that was on its way). Their futures fail with
   * {@link ApiException.Kind#CLOSED}.
   */
  @Override
  public void close() {
    List<Entry> left;
    synchronized (this) {
      closed = true;
      timer.close();
      left = new ArrayList<>(queue);
    }
    for (Entry e : left) e.result.completeExceptionally(Failures.closed(null));
  }

  private CompletableFuture<Object> enqueue(Route route, Record request) {
    if (request == null) {
      return CompletableFuture.failedFuture(new ApiException(ApiException.Kind.INVALID_ARGUMENT, 0, "request: null where a value is required",
          null, null, null, null));
    }
    if (closed || api.transport.isClosed()) return CompletableFuture.failedFuture(Failures.closed(null));
    WriteJournal.Saved write = journal.entry(route, UUID.randomUUID().toString(), StrictJson.encode(request), Instant.now());
    Entry entry = new Entry(write, new CompletableFuture<>());
    // Saved (forced to the disk) on the client's threads, one at a time, in the order the writes were made.
    synchronized (this) {
      saving = saving.thenRunAsync(() -> save(entry), BoundFuture.orInline(api.transport.executor));
    }
    return entry.result;
  }

  private void save(Entry entry) {
    try {
      journal.save(entry.write);
    } catch (IOException | RuntimeException e) { // a failure here must not stop the chain of saves behind it
      entry.result.completeExceptionally(new ApiException(ApiException.Kind.UNEXPECTED, 0, "could not save the write to " + entry.write.file()
          + ": " + e, null, null, null, e));
      return;
    }
    synchronized (this) {
      // Closed meanwhile: saved all the same, sent at the next start.
      if (!closed) queue.add(entry);
    }
    if (closed) entry.result.completeExceptionally(Failures.closed(null));
    sendNext();
  }

  /** Queues the writes an earlier run left; reports those that could not be read back. */
  private void load() throws IOException {
    List<WriteJournal.Saved> saved = journal.readAll((aside, unreadable) ->
        report(new Outcome(null, null, null, null, new ApiException(ApiException.Kind.UNEXPECTED, 0,
            "a saved write could not be read, kept as " + aside + ": " + unreadable, null, null, null, unreadable)), () -> {}));
    synchronized (this) {
      for (WriteJournal.Saved write : saved) queue.add(new Entry(write, new CompletableFuture<>()));
    }
  }

  private void sendNext() {
    Entry head;
    synchronized (this) {
      if (closed || sending || queue.isEmpty()) return;
      head = queue.peek();
      sending = true;
    }
    WriteJournal.Saved write = head.write;
    if (Instant.now().isAfter(write.queuedAt().plus(giveUpAfter))) {
      finish(head, null, new ApiException(ApiException.Kind.NETWORK, 0, "not answered within " + giveUpAfter + " of being queued: dropped,"
          + " since the service keeps an Idempotency-Key 24 hours only", null, null, null, null));
      return;
    }
    api.send(write.route(), Map.of(), write.body(), Map.of(Headers.IDEMPOTENCY_KEY, write.key()), true).whenComplete((answer, failure) -> {
      if (failure == null) {
        finish(head, answer.body(), null);
        return;
      }
      ApiException e = ApiException.unwrap(failure);
      if (Failures.definite(e)) {
        finish(head, null, e);
      } else if (e.kind() != ApiException.Kind.CLOSED && e.kind() != ApiException.Kind.OUTCOME_UNKNOWN) {
        retryLater(e);
      } else {
        synchronized (this) {
          sending = false;
        }
      }
    });
  }

  private void retryLater(ApiException e) {
    Duration wait;
    synchronized (this) {
      sending = false;
      failures++;
      long cap = Math.min(maxWait.toMillis(), FIRST_WAIT.toMillis() << Math.min(failures - 1, 20));
      wait = Duration.ofMillis(cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1));
    }
    if (e.retryAfter().isPresent() && e.retryAfter().get().compareTo(wait) > 0) wait = e.retryAfter().get();
    api.schedule(this::sendNext, wait, timer);
  }

  private void finish(Entry entry, Object value, ApiException failure) {
    journal.remove(entry.write);
    synchronized (this) {
      queue.remove(entry);
      sending = false;
      failures = 0;
    }
    // The listener first: whoever waits on the future finds the outcome reported.
    report(new Outcome(entry.write.key(), entry.write.route() == Route.CREATE_FORM ? Operation.CREATE_FORM : Operation.CREATE_REWARD_LOG,
        value instanceof RewardLog log ? log : null, value instanceof FormAnswer answer ? answer : null, failure), () -> {
          if (failure == null) entry.result.complete(value);
          else entry.result.completeExceptionally(failure);
        });
    sendNext();
  }

  /** Tells the listener, on the callback executor and after the outcomes before it, then runs {@code then} (completing the future). */
  private void report(Outcome outcome, Runnable then) {
    synchronized (this) {
      told = told.thenRunAsync(() -> {
        // The listener's own failure is logged, and does not stop the queue.
        api.transport.callback("the outcome listener of DurableWrites (for " + outcome + ")", () -> listener.accept(outcome));
        then.run();
      }, BoundFuture.orInline(api.callbackExecutor()));
    }
  }
}
