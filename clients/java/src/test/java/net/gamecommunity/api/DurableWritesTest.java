package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import net.gamecommunity.api.ScriptedServer.Reply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable queue against a scripted server: outages, a restart, a definite refusal, giving up. */
class DurableWritesTest {
  private static final String LOG = "{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}";
  private static final Reply UNAVAILABLE = Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of("Retry-After", "0"));
  private static final Duration QUICK = Duration.ofMillis(50);
  private static final Duration DAY = Duration.ofHours(23);

  @TempDir
  Path directory;

  private static CommunityApi client(ScriptedServer server) {
    return CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build();
  }

  private long files() throws Exception {
    try (Stream<Path> list = Files.list(directory)) {
      return list.count();
    }
  }

  @Test
  void whenAWriteIsMadeOnAGamesMainThread_thenItsFileIsWrittenOnTheClientsThreads_inTheOrderTheWritesWereMade() throws Exception {
    List<String> saves = new CopyOnWriteArrayList<>();
    WriteJournal watched = new WriteJournal(directory) {
      @Override
      void save(Saved write) throws IOException {
        saves.add(Thread.currentThread().getName() + " " + write.body().get("rewardId"));
        super.save(write);
      }
    };
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").threadNamePrefix("durable").build()) {
      server.route("POST", Reply.of(201, LOG, Map.of()));
      ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "server-main"));
      try (DurableWrites writes = DurableWrites.open(api, watched, outcome -> {}, QUICK, DAY)) {
        List<CompletableFuture<RewardLog>> made = main.submit(() -> List.of(
            writes.createRewardLog(NewRewardLog.now(1, 1)), writes.createRewardLog(NewRewardLog.now(1, 2)),
            writes.createRewardLog(NewRewardLog.now(1, 3)))).get(10, TimeUnit.SECONDS);
        for (CompletableFuture<RewardLog> write : made) write.get(10, TimeUnit.SECONDS);
      } finally {
        main.shutdownNow();
      }
      assertEquals(List.of("1", "2", "3"), saves.stream().map(s -> s.substring(s.indexOf(' ') + 1)).toList());
      assertTrue(saves.stream().allMatch(s -> s.startsWith("durable-")), saves.toString());
    }
  }

  @Test
  void whenOneWriteCannotBeSaved_thenItsFutureFails_andTheWritesAfterItAreSavedAndSentAllTheSame() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
    WriteJournal failingOnce = new WriteJournal(directory) {
      @Override
      void save(Saved write) throws IOException {
        if (first.getAndSet(false)) throw new IllegalStateException("disk gone");
        super.save(write);
      }
    };
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      server.route("POST", Reply.of(201, LOG, Map.of()));
      try (DurableWrites writes = DurableWrites.open(api, failingOnce, outcome -> {}, QUICK, DAY)) {
        CompletableFuture<RewardLog> lost = writes.createRewardLog(NewRewardLog.now(1, 1));
        CompletableFuture<RewardLog> kept = writes.createRewardLog(NewRewardLog.now(1, 2));
        ExecutionException e = assertThrows(ExecutionException.class, () -> lost.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("disk gone"), e.getCause().getMessage());
        assertEquals(9, kept.get(10, TimeUnit.SECONDS).id());
      }
    }
  }

  @Test
  void whenTheServiceIsDownForAWhile_thenTheWriteIsResentWithItsKeyUntilRecorded_andItsFileIsGone() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      for (int i = 0; i < 3; i++) server.script.add(UNAVAILABLE);
      server.script.add(Reply.of(201, LOG, Map.of()));
      List<DurableWrites.Outcome> outcomes = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcomes::add, QUICK, DAY)) {
        RewardLog log = writes.createRewardLog(NewRewardLog.now(1, 42)).get(10, TimeUnit.SECONDS);
        assertEquals(9, log.id());
        assertEquals(0, writes.pending());
      }
      assertEquals(4, server.received.size());
      assertEquals(1, server.received.stream().map(r -> r.get("idempotencyKey")).distinct().count());
      assertEquals(1, server.received.stream().map(r -> r.get("body")).distinct().count());
      assertTrue(server.received.get(0).get("body").contains("\"rewardedAt\":"), "the moment is fixed when queued");
      assertEquals(1, outcomes.size());
      assertTrue(outcomes.get(0).succeeded());
      assertEquals(0, files());
    }
  }

  @Test
  void whenThePluginRestartsBeforeTheServiceAnswers_thenTheNextRunSendsTheSavedWriteWithItsKey() throws Exception {
    String firstKey;
    String firstBody;
    try (ScriptedServer down = new ScriptedServer(); CommunityApi api = client(down)) {
      down.route("POST", UNAVAILABLE);
      DurableWrites writes = DurableWrites.open(api, directory, outcome -> {}, QUICK, DAY);
      var pending = writes.createRewardLog(NewRewardLog.now(1, 42));
      while (down.received.isEmpty()) Thread.sleep(5);
      writes.close();
      assertEquals(ApiException.Kind.CLOSED, ApiException.unwrap(assertThrows(ExecutionException.class, () -> pending.get(1, TimeUnit.SECONDS))).kind());
      firstKey = down.received.get(0).get("idempotencyKey");
      firstBody = down.received.get(0).get("body");
    }
    assertEquals(1, files());
    try (ScriptedServer up = new ScriptedServer(); CommunityApi api = client(up)) {
      up.script.add(Reply.of(201, LOG, Map.of("Idempotent-Replayed", "true")));
      List<DurableWrites.Outcome> outcomes = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcomes::add, QUICK, DAY)) {
        while (outcomes.isEmpty()) Thread.sleep(5); // told on the client's executor, once answered
        assertEquals(0, writes.pending());
      }
      assertEquals(1, outcomes.size());
      assertEquals(firstKey, outcomes.get(0).idempotencyKey());
      assertEquals(new RewardLog(9, 1, 42, java.time.Instant.parse("2026-11-22T09:15:30Z")), outcomes.get(0).rewardLog());
      assertEquals(DurableWrites.Operation.CREATE_REWARD_LOG, outcomes.get(0).operation());
      assertEquals(firstKey, up.received.get(0).get("idempotencyKey"));
      assertEquals(firstBody, up.received.get(0).get("body"));
      assertEquals(0, files());
    }
  }

  @Test
  void whenTheServiceRefusesTheWrite_thenItIsNotSentAgain_andTheRefusalIsReported() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      server.script.add(Reply.of(409, "{\"code\":409,\"message\":\"playerId: no player has id 77\"}", Map.of("Error-Name", "REFERENCE_NOT_FOUND")));
      server.script.add(Reply.of(201, LOG, Map.of()));
      List<DurableWrites.Outcome> outcomes = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcomes::add, QUICK, DAY)) {
        var refused = writes.createRewardLog(NewRewardLog.now(77, 42));
        var next = writes.createRewardLog(NewRewardLog.now(1, 42));
        ApiException e = ApiException.unwrap(assertThrows(ExecutionException.class, () -> refused.get(10, TimeUnit.SECONDS)));
        assertEquals("REFERENCE_NOT_FOUND", e.error().orElseThrow());
        assertEquals(9, next.get(10, TimeUnit.SECONDS).id());
      }
      assertEquals(2, server.received.size());
      assertFalse(outcomes.get(0).succeeded());
      assertNull(outcomes.get(0).rewardLog());
      assertTrue(outcomes.get(1).succeeded());
      assertEquals(0, files());
    }
  }

  @Test
  void whenASavedWriteIsOlderThanGiveUpAfter_thenItIsDroppedUnsent_andReported() throws Exception {
    try (ScriptedServer down = new ScriptedServer(); CommunityApi api = client(down)) {
      down.route("POST", UNAVAILABLE);
      try (DurableWrites writes = DurableWrites.open(api, directory, outcome -> {}, QUICK, DAY)) {
        writes.createRewardLog(NewRewardLog.now(1, 42));
        while (down.received.isEmpty()) Thread.sleep(5);
      }
    }
    // Queued two days ago: the service may have forgotten its key, a resend could record it twice.
    Path saved;
    try (Stream<Path> list = Files.list(directory)) {
      saved = list.findFirst().orElseThrow();
    }
    Files.writeString(saved, Files.readString(saved).replaceFirst("\"queuedAt\":\"[^\"]*\"",
        "\"queuedAt\":\"" + java.time.Instant.now().minus(Duration.ofDays(2)) + "\""));
    try (ScriptedServer up = new ScriptedServer(); CommunityApi api = client(up)) {
      up.script.add(Reply.of(201, LOG, Map.of()));
      List<DurableWrites.Outcome> outcomes = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcomes::add, QUICK, DAY)) {
        assertEquals(0, writes.pending());
      }
      while (outcomes.isEmpty()) Thread.sleep(5); // told on the client's executor
      assertEquals(1, outcomes.size());
      assertTrue(outcomes.get(0).failure().getMessage().contains("not answered within"), outcomes.get(0).toString());
      assertEquals(0, up.received.size());
      assertEquals(0, files());
    }
  }

  @Test
  void whenTheClientHasACallbackExecutor_thenOutcomesAndTheWritesFuturesComeOnIt() throws Exception {
    java.util.concurrent.ExecutorService main = java.util.concurrent.Executors.newSingleThreadExecutor(r -> new Thread(r, "game-main-thread"));
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(main).build()) {
      server.script.add(Reply.of(201, LOG, Map.of()));
      List<String> threads = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcome -> threads.add("outcome on " + Thread.currentThread().getName()))) {
        String completedOn = writes.createRewardLog(NewRewardLog.now(1, 42)).thenApply(log -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
        assertEquals("game-main-thread", completedOn);
      }
      assertEquals(List.of("outcome on game-main-thread"), threads, "the outcome is told before the future completes");
    } finally {
      main.shutdownNow();
    }
  }

  @Test
  void whenASavedFileIsUnreadable_thenItIsSetAside_andReported() throws Exception {
    Files.writeString(directory.resolve("0000000000000000001-000001-broken.json"), "{not json");
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      List<DurableWrites.Outcome> outcomes = new CopyOnWriteArrayList<>();
      try (DurableWrites writes = DurableWrites.open(api, directory, outcomes::add)) {
        assertEquals(0, writes.pending());
      }
      while (outcomes.isEmpty()) Thread.sleep(5);
      assertEquals(1, outcomes.size());
      assertEquals(ApiException.Kind.UNEXPECTED, outcomes.get(0).failure().kind());
      assertTrue(Files.exists(directory.resolve("0000000000000000001-000001-broken.json.unreadable")));
      assertEquals(0, server.received.size());
    }
  }
}
