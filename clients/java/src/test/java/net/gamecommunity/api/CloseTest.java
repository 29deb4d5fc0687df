package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import net.gamecommunity.api.ScriptedServer.Reply;
import org.junit.jupiter.api.Test;

/**
 * A plugin's disable (or /reload) closes the client while calls are pending: none may be left to hang
 * a thread that waits on it. The waits below are bounded so that a regression fails instead of hanging.
 */
class CloseTest {
  private static final Duration LONG = Duration.ofSeconds(30);
  private static final String WORLD = "{\"id\":4,\"name\":\"w\"}";
  private static final String REWARD = "{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}";

  /** The failure of a future that must be complete already (or within a second: close completes on its own thread). */
  private static ApiException failureOf(CompletableFuture<?> future) throws Exception {
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(1, TimeUnit.SECONDS));
    return ApiException.unwrap(e);
  }

  private static List<String> clientThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith("community-api")).toList();
  }

  @Test
  void whenTheClientIsClosedWhileACallIsInFlight_thenThatCallFailsAtOnceAsClosed() throws Exception {
    try (ScriptedServer server = new ScriptedServer()) {
      server.script.add(new Reply(200, "[]", Map.of(), LONG));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
      CompletableFuture<List<ParkourMap>> inFlight = api.getAllMaps();
      while (server.received.isEmpty()) Thread.sleep(5);
      api.close();
      assertEquals(ApiException.Kind.CLOSED, failureOf(inFlight).kind());
    }
  }

  @Test
  void whenTheClientIsClosedWhileACallWaitsToRetry_thenThatCallFailsAtOnceAsClosed() throws Exception {
    RetryPolicy patient = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(10), Duration.ofSeconds(60));
    try (ScriptedServer server = new ScriptedServer()) {
      server.script.add(Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of("Retry-After", "30")));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(patient).build();
      CompletableFuture<List<ParkourMap>> waiting = api.getAllMaps();
      while (server.received.isEmpty()) Thread.sleep(5);
      Thread.sleep(100); // the 503 answered: the call now waits 30 s to retry
      api.close();
      assertEquals(ApiException.Kind.CLOSED, failureOf(waiting).kind());
      assertEquals(1, server.received.size());
    }
  }

  @Test
  void whenTheClientIsClosedWithAGracePeriod_thenAWriteInFlightFinishes_andAReadFailsAsClosed() throws Exception {
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("POST", new Reply(201, "{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}", Map.of(), Duration.ofMillis(300)));
      server.route("GET", new Reply(200, "[]", Map.of(), LONG));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
      CompletableFuture<Created<RewardLog>> write = api.createRewardLog(NewRewardLog.now(1, 42));
      CompletableFuture<List<ParkourMap>> read = api.getAllMaps();
      while (server.received.size() < 2) Thread.sleep(5);
      api.close(Duration.ofSeconds(20));
      assertEquals(9, write.get(1, TimeUnit.SECONDS).value().id());
      assertEquals(ApiException.Kind.CLOSED, failureOf(read).kind());
    }
  }

  @Test
  void whenTheGracePeriodEndsBeforeAWriteIsAnswered_thenThatWriteFailsAsOutcomeUnknown_notClosed() throws Exception {
    try (ScriptedServer server = new ScriptedServer()) {
      server.script.add(new Reply(200, WORLD, Map.of(), LONG));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
      CompletableFuture<FreebuildWorld> write = api.updateWorld(WorldUpdate.of(4).state("loaded").build());
      while (server.received.isEmpty()) Thread.sleep(5);
      api.close(Duration.ofMillis(100));
      assertEquals(ApiException.Kind.OUTCOME_UNKNOWN, failureOf(write).kind(), "the service may have recorded it");
    }
  }

  @Test
  void whenAWriteRefusedWith503WaitsToRetry_thenClosingFailsItAsClosed() throws Exception {
    RetryPolicy patient = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(10), Duration.ofSeconds(60));
    try (ScriptedServer server = new ScriptedServer()) {
      // Its rate headers say when the client has read the 503 (it notes them once the attempt is over).
      server.script.add(Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}",
          Map.of("Retry-After", "30", "RateLimit", "\"user\"; r=17; t=42")));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(patient).build();
      CompletableFuture<Created<RewardLog>> waiting = api.createRewardLog(NewRewardLog.now(1, 42));
      // The 503 read: nothing was written, the call waits 30 s to retry.
      long until = System.currentTimeMillis() + 10_000;
      while (api.rateLimit().isEmpty() && System.currentTimeMillis() < until) Thread.sleep(5);
      api.close();
      assertEquals(ApiException.Kind.CLOSED, failureOf(waiting).kind());
    }
  }

  /**
   * A plugin's onDisable runs on the main thread, which is also where the client completes its futures
   * (callbackExecutor): the answers that come while close(grace) waits are queued behind it.
   */
  @Test
  void whenCloseWithGraceRunsOnTheCallbackThread_thenTheWritesTheServiceAnsweredCompleteWithTheirAnswers() throws Exception {
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "game-main-thread"));
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("POST", new Reply(201, REWARD, Map.of(), Duration.ofMillis(300)));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(main).build();
      List<CompletableFuture<Created<RewardLog>>> writes = main.submit(() -> {
        List<CompletableFuture<Created<RewardLog>>> sent = List.of(api.createRewardLog(NewRewardLog.now(1, 42)),
            api.createRewardLog(NewRewardLog.now(2, 42)), api.createRewardLog(NewRewardLog.now(3, 42)));
        while (server.received.size() < 3) Thread.sleep(5);
        api.close(Duration.ofSeconds(20)); // onDisable
        return sent;
      }).get();
      for (CompletableFuture<Created<RewardLog>> write : writes) assertEquals(9, write.get(1, TimeUnit.SECONDS).value().id());
    } finally {
      main.shutdownNow();
    }
  }

  @Test
  void whenTheClientIsClosed_thenNoneOfItsThreadsOutlivesIt_andPollersStop() throws Exception {
    try (ScriptedServer server = new ScriptedServer()) {
      for (int i = 0; i < 5; i++) server.script.add(Reply.of(200, "[]", Map.of("ETag", "\"e\"")));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
      List<ApiException> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
      api.mapsPoller().start(Duration.ofMillis(10), maps -> {}, errors::add);
      api.getAllMaps().get(5, TimeUnit.SECONDS);
      while (server.received.size() < 3) Thread.sleep(5);
      api.close();
      assertEquals(List.of(), clientThreads());
      int polls = server.received.size();
      Thread.sleep(100);
      assertEquals(polls, server.received.size());
      assertEquals(List.of(), errors, "a poll cut by close is no error to report");
    }
  }

  /**
   * A pool's threads outlive its termination by a moment (the last one marks the pool terminated, then
   * returns): seen in CI on a busy machine. A plugin reloaded many times must not gather threads either.
   */
  @Test
  void whenClientsAreClosedOneAfterAnother_thenEachClosesWithNoneOfItsThreadsLeft() throws Exception {
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("GET", Reply.of(200, "[]", Map.of()));
      for (int i = 0; i < 100; i++) {
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
        api.getAllMaps().get(5, TimeUnit.SECONDS);
        api.close();
        assertEquals(List.of(), clientThreads(), "after close number " + (i + 1));
      }
    }
  }

  /** Bukkit's scheduler throws (IllegalPluginAccessException) for a plugin being disabled: onDisable's close meets that. */
  @Test
  void whenTheCallbackExecutorThrowsOnDisable_thenCloseStillCompletesTheAnsweredWrite_andDoesNotThrow() throws Exception {
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "game-main-thread"));
    java.util.concurrent.atomic.AtomicBoolean disabled = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.Executor scheduler = task -> {
      if (disabled.get()) throw new IllegalStateException("Plugin attempted to register task while disabled");
      main.execute(task);
    };
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("POST", new Reply(201, REWARD, Map.of(), Duration.ofMillis(300)));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(scheduler).build();
      CompletableFuture<Created<RewardLog>> write = api.createRewardLog(NewRewardLog.now(1, 42));
      CompletableFuture<Integer> seen = write.thenApply(created -> created.value().id());
      while (server.received.isEmpty()) Thread.sleep(5);
      disabled.set(true);
      api.close(Duration.ofSeconds(20));
      assertEquals(9, write.get(1, TimeUnit.SECONDS).value().id());
      assertEquals(9, seen.get(1, TimeUnit.SECONDS));
    } finally {
      main.shutdownNow();
    }
  }
}
