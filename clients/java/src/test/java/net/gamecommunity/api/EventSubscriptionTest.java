package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The subscription's reconnection rules, against a scripted server: streams that end, a 429 with
 * Retry-After, a 410. What the live service streams is checked in {@link LiveApiTest}.
 */
class EventSubscriptionTest {
  private static final String ID_0 = "00000000000000100000000000000001";
  private static final String ID_1 = "00000000000000100000000000000002";
  private static final String ID_2 = "00000000000000110000000000000003";

  private ScriptedServer server;
  private ExecutorService executor;
  private CommunityApi api;
  private final List<String> calls = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    server = new ScriptedServer();
    executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "plugin-executor"));
    api = CommunityApi.builder(server.baseUrl(), "gsk_test").executor(executor).build();
  }

  @AfterEach
  void stop() {
    api.close();
    executor.shutdownNow();
    server.close();
  }

  private static String event(String id, int rewardId) {
    return "id: " + id + "\nevent: reward_log.created\ndata: {\"type\":\"reward_log.created\",\"timestamp\":\"2026-11-25T10:00:00.000Z\","
        + "\"data\":{\"id\":" + rewardId + ",\"playerId\":1,\"rewardId\":" + rewardId + ",\"rewardedAt\":\"2026-11-25T10:00:00Z\"}}\n\n";
  }

  private final EventListener recorder = new EventListener() {
    @Override
    public void onEvent(Event e) {
      calls.add("event " + e.id() + " " + e.data().get("rewardId").getAsInt() + " on " + Thread.currentThread().getName());
    }

    @Override
    public void onStopped(ApiException reason) {
      calls.add("stopped " + reason.status());
    }

    @Override
    public void onReconnecting(Throwable reason, long delayMillis) {
      calls.add("reconnecting in " + delayMillis);
    }
  };

  private void waitFor(String what, java.util.function.BooleanSupplier test) throws InterruptedException {
    long until = System.currentTimeMillis() + 10_000;
    while (!test.getAsBoolean()) {
      if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what + ": " + calls);
      Thread.sleep(10);
    }
  }

  @Test
  void reconnectsAfterTheRetryHintAndRetryAfterResumingAfterTheLastEventThenStopsOnA410() throws InterruptedException {
    server.script.add(ScriptedServer.Reply.of(200, "retry: 100\nid: " + ID_0 + "\n\n" + event(ID_1, 7) + ": heartbeat\n\n", Map.of()));
    server.script.add(ScriptedServer.Reply.of(429, "{\"code\":429,\"message\":\"too many streams\"}", Map.of("Retry-After", "1")));
    server.script.add(ScriptedServer.Reply.of(200, event(ID_2, 8), Map.of()));
    server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"Last-Event-ID: past the retention\"}", Map.of()));
    EventSubscription subscription = api.subscribe(List.of("reward_log.created"), recorder);
    waitFor("the 410", () -> calls.contains("stopped 410"));
    assertEquals(List.of(
        "event " + ID_1 + " 7 on plugin-executor",
        "reconnecting in 100",
        "reconnecting in 1000",
        "event " + ID_2 + " 8 on plugin-executor",
        "reconnecting in 100",
        "stopped 410"), calls);
    assertEquals(List.of("null", ID_1, ID_1, ID_2), server.received.stream().map(r -> r.get("lastEventId")).toList());
    // Made without an id: the first connection asks for the events since subscribe().
    assertTrue(server.received.get(0).get("uri").startsWith("/api/events?types=reward_log.created&startAt="), server.received.get(0).get("uri"));
    assertEquals("/api/events?types=reward_log.created", server.received.get(1).get("uri"));
    // Every connection carries the client's key and User-Agent, as its calls do.
    for (Map<String, String> request : server.received) {
      assertEquals("gsk_test", request.get("apiKey"));
      assertTrue(request.get("userAgent").startsWith("game-community-api-java/"), request.get("userAgent"));
    }
    assertTrue(subscription.isClosed());
  }

  @Test
  void whenTheServiceIsDownAtSubscribe_thenEachConnectionAsksForTheEventsSinceThen_untilTheStreamGivesAPosition() throws Exception {
    server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Not ready: this instance is starting\"}", Map.of("Retry-After", "0")));
    server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Not ready: this instance is starting\"}", Map.of("Retry-After", "0")));
    server.script.add(ScriptedServer.Reply.of(200, "retry: 100\n\n" + event(ID_1, 7), Map.of()));
    server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"Last-Event-ID: past the retention\"}", Map.of()));
    java.time.Instant before = java.time.Instant.now();
    api.subscribe(List.of("reward_log.created"), new EventListener() {
      @Override
      public void onEvent(Event e) {
        calls.add("event " + e.id());
      }

      @Override
      public void onConnected() {
        calls.add("connected");
      }

      @Override
      public void onStopped(ApiException reason) {
        calls.add("stopped " + reason.status());
      }
    });
    java.time.Instant after = java.time.Instant.now();
    waitFor("the 410", () -> calls.contains("stopped 410"));
    assertEquals(List.of("connected", "event " + ID_1, "stopped 410"), calls);
    List<String> uris = server.received.stream().map(r -> r.get("uri")).toList();
    String since = uris.get(0).replaceFirst("^/api/events\\?types=reward_log\\.created&startAt=", "");
    java.time.Instant asked = java.time.Instant.parse(java.net.URLDecoder.decode(since, java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(!asked.isBefore(before.truncatedTo(java.time.temporal.ChronoUnit.MILLIS)) && !asked.isAfter(after), asked + " between " + before + " and " + after);
    // The same moment on each attempt, until an event gave a position; then Last-Event-ID alone.
    assertEquals(List.of(uris.get(0), uris.get(0), uris.get(0), "/api/events?types=reward_log.created"), uris);
    assertEquals(List.of("null", "null", "null", ID_1), server.received.stream().map(r -> r.get("lastEventId")).toList());
  }

  @Test
  void whenTheListenerBlocks_thenLastEventIdPassesItsEventOnlyOnceItReturns_andNothingComesTwice() throws Exception {
    server.script.add(ScriptedServer.Reply.of(200, "id: " + ID_0 + "\n\n" + event(ID_1, 7) + event(ID_2, 8), Map.of()));
    server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"Last-Event-ID: past the retention\"}", Map.of()));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<RewardLog> handled = new CopyOnWriteArrayList<>();
    EventSubscription subscription = api.subscribe(List.of(), new EventListener() {
      @Override
      public void onEvent(Event e) {
        entered.countDown();
        await(release);
        handled.add(e.as(RewardLog.class));
        calls.add(e.id() + " at " + e.timestamp());
      }

      @Override
      public void onStopped(ApiException reason) {
        calls.add("stopped " + reason.status());
      }
    });
    entered.await();
    assertEquals(ID_0, subscription.lastEventId(), "the event being handled is not passed yet");
    release.countDown();
    waitFor("the 410", () -> calls.contains("stopped 410"));
    assertEquals(ID_2, subscription.lastEventId());
    assertEquals(List.of(ID_1 + " at 2026-11-25T10:00:00Z", ID_2 + " at 2026-11-25T10:00:00Z", "stopped 410"), calls);
    assertEquals(List.of(7, 8), handled.stream().map(RewardLog::rewardId).toList());
    assertEquals(List.of("null", ID_2), server.received.stream().map(r -> r.get("lastEventId")).toList());
  }

  @Test
  void whenTheListenerThrows_thenTheFailureIsReported_andTheEventCountsAsHandled() throws Exception {
    server.script.add(ScriptedServer.Reply.of(200, event(ID_1, 7) + event(ID_2, 8), Map.of()));
    server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"Last-Event-ID: past the retention\"}", Map.of()));
    EventSubscription subscription = api.subscribe(List.of(), new EventListener() {
      @Override
      public void onEvent(Event e) {
        calls.add("event " + e.id());
        if (e.id().equals(ID_1)) throw new IllegalStateException("plugin bug");
      }

      @Override
      public void onListenerFailed(Event e, RuntimeException failure) {
        calls.add("failed " + e.id() + ": " + failure.getMessage());
      }

      @Override
      public void onStopped(ApiException reason) {
        calls.add("stopped " + reason.status());
      }
    });
    waitFor("the 410", () -> calls.contains("stopped 410"));
    assertEquals(List.of("event " + ID_1, "failed " + ID_1 + ": plugin bug", "event " + ID_2, "stopped 410"), calls);
    assertEquals(ID_2, subscription.lastEventId());
    assertEquals(List.of("null", ID_2), server.received.stream().map(r -> r.get("lastEventId")).toList());
  }

  @Test
  void whenTheListenerThrowsAndDoesNotHandleIt_thenTheFailureIsLoggedAsAWarning() throws Exception {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(ClientLog.LOGGER_NAME);
    List<java.util.logging.LogRecord> logged = new CopyOnWriteArrayList<>();
    java.util.logging.Handler handler = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord record) {
        logged.add(record);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(handler);
    try {
      server.script.add(ScriptedServer.Reply.of(200, event(ID_1, 7), Map.of()));
      api.subscribe(List.of(), e -> {
        throw new IllegalStateException("plugin bug");
      });
      waitFor("the warning", () -> !logged.isEmpty());
      assertEquals(java.util.logging.Level.WARNING, logged.get(0).getLevel());
      assertEquals("plugin bug", logged.get(0).getThrown().getMessage());
      assertTrue(logged.get(0).getMessage().contains(ID_1), logged.get(0).getMessage());
    } finally {
      logger.removeHandler(handler);
    }
  }

  @Test
  void whenACallbackExecutorIsGiven_thenTheListenerRunsOnIt() throws Exception {
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "game-main-thread"));
    try (CommunityApi onMain = CommunityApi.builder(server.baseUrl(), "gsk_test").executor(executor).callbackExecutor(main).build()) {
      server.script.add(ScriptedServer.Reply.of(200, event(ID_1, 7), Map.of()));
      server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"gone\"}", Map.of()));
      onMain.subscribe(List.of(), recorder);
      waitFor("the 410", () -> calls.contains("stopped 410"));
      assertEquals("event " + ID_1 + " 7 on game-main-thread", calls.get(0));
    } finally {
      main.shutdownNow();
    }
  }

  /** Seen in CI on a busy machine: the listener heard onStopped before isClosed() was true. A direct executor makes it certain. */
  @Test
  void whenTheStreamIsRefusedForGood_thenTheSubscriptionIsAlreadyClosedWhenTheListenerHearsIt() throws Exception {
    server.script.add(ScriptedServer.Reply.of(401, "{\"code\":401,\"message\":\"Invalid API key\"}", Map.of()));
    try (CommunityApi direct = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(Runnable::run).build()) {
      java.util.concurrent.CompletableFuture<EventSubscription> made = new java.util.concurrent.CompletableFuture<>();
      java.util.concurrent.CompletableFuture<Boolean> closedWhenTold = new java.util.concurrent.CompletableFuture<>();
      made.complete(direct.subscribe(List.of(), new EventListener() {
        @Override
        public void onEvent(Event e) {}

        @Override
        public void onStopped(ApiException reason) {
          closedWhenTold.complete(made.join().isClosed());
        }
      }));
      assertTrue(closedWhenTold.get(10, java.util.concurrent.TimeUnit.SECONDS));
    }
  }

  @Test
  void whenSubscribeIsGivenNull_orCalledAfterClose_thenItThrows() {
    assertThrows(NullPointerException.class, () -> api.subscribe(null, recorder));
    assertThrows(NullPointerException.class, () -> api.subscribe(List.of(), null));
    api.close();
    assertThrows(IllegalStateException.class, () -> api.subscribe(List.of(), recorder));
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void resumesAfterTheIdGivenAndIsClosedWithTheClient() throws InterruptedException {
    server.script.add(new ScriptedServer.Reply(200, event(ID_2, 9), Map.of(), Duration.ofSeconds(3)));
    EventSubscription subscription = api.subscribe(List.of(), ID_1, recorder);
    waitFor("the request", () -> server.received.size() == 1);
    assertEquals(ID_1, server.received.get(0).get("lastEventId"));
    assertEquals("/api/events", server.received.get(0).get("uri"));
    api.close();
    assertTrue(subscription.isClosed());
    Thread.sleep(3_500);
    assertEquals(List.of(), calls);
  }
}
