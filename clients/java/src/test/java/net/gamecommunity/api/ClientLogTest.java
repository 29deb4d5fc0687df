package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Nothing stops silently: a subscription refused for good and every exception a plugin's callback throws
 * reach the client's log as a warning, whichever way the plugin wrote its listener (the README's lambda).
 */
class ClientLogTest {
  private static final String ID_1 = "00000000000000100000000000000002";
  private static final String SKY = "{\"id\":6,\"name\":\"Sky run\",\"enable\":true,\"spawnLocation\":null,\"difficulty\":\"hard\"}";

  /** A log that keeps its lines. */
  private static final class Lines implements ClientLog {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public void log(Level level, String message, Throwable error) {
      lines.add(level + " " + message + (error == null ? "" : " [" + error.getMessage() + "]"));
    }

    List<String> warnings() {
      return lines.stream().filter(l -> l.startsWith("WARNING ")).toList();
    }
  }

  /** A client of {@code server} that retries nothing and logs to {@code log}. */
  private static CommunityApi client(ScriptedServer server, ClientLog log) {
    return CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).log(log).build();
  }

  private static void waitFor(String what, BooleanSupplier test, Object seen) throws InterruptedException {
    long until = System.currentTimeMillis() + 10_000;
    while (!test.getAsBoolean()) {
      if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what + ": " + seen);
      Thread.sleep(10);
    }
  }

  @Test
  void whenAKeyIsRevoked_thenTheLambdaSubscriptionsEndIsAWarningSayingWhatToDo() throws Exception {
    Lines log = new Lines();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server, log)) {
      server.script.add(ScriptedServer.Reply.of(401, "{\"code\":401,\"message\":\"Invalid API key\"}", Map.of()));
      EventSubscription subscription = api.subscribe(List.of("reward_log.created"), event -> {});
      waitFor("the warning", () -> !log.warnings().isEmpty(), log.lines);
      assertTrue(subscription.isClosed());
      assertEquals(1, log.warnings().size(), log.lines.toString());
      String warning = log.warnings().get(0);
      assertTrue(warning.contains("/api/events?types=reward_log.created stopped for good: Invalid API key"), warning);
      assertTrue(warning.contains("give the plugin the new key"), warning);
    }
  }

  @Test
  void whenTheListenerThrows_thenTheFailureIsLoggedWithItsEvent_andTheNextEventComes() throws Exception {
    Lines log = new Lines();
    List<String> seen = new CopyOnWriteArrayList<>();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server, log)) {
      String frame = "id: " + ID_1 + "\ndata: {\"type\":\"reward_log.created\",\"timestamp\":\"2026-11-25T10:00:00.000Z\",\"data\":{\"id\":7}}\n\n";
      server.script.add(ScriptedServer.Reply.of(200, frame + frame.replace("\"id\":7", "\"id\":8"), Map.of()));
      api.subscribe(List.of(), event -> {
        seen.add(event.data().get("id").toString());
        if (seen.size() == 1) throw new IllegalStateException("the plugin's bug");
      });
      waitFor("both events", () -> seen.size() == 2, seen);
      waitFor("the warning", () -> !log.warnings().isEmpty(), log.lines);
      String warning = log.warnings().get(0);
      assertTrue(warning.contains("the event listener (onEvent, for Event[") && warning.contains("reward_log.created"), warning);
      assertTrue(warning.endsWith("[the plugin's bug]"), warning);
    }
  }

  @Test
  void whenAPollersOnChangeThrows_thenItIsLogged_andPollingGoesOn() throws Exception {
    Lines log = new Lines();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server, log)) {
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "]", Map.of("ETag", "\"maps-1\"")));
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of("ETag", "\"maps-2\"")));
      List<Integer> sizes = new CopyOnWriteArrayList<>();
      try (ListPoller.Subscription loop = api.mapsPoller().start(Duration.ofMillis(10), maps -> {
        sizes.add(maps.size());
        throw new IllegalStateException("hologram gone");
      }, error -> {})) {
        waitFor("two lists", () -> sizes.size() == 2, sizes);
        assertTrue(!loop.isClosed());
      }
      assertTrue(log.warnings().size() >= 2, log.lines.toString());
      assertTrue(log.warnings().get(0).startsWith("WARNING the onChange listener of ListPoller.start threw java.lang.IllegalStateException: hologram gone"),
          log.warnings().get(0));
    }
  }

  @Test
  void whenASyncsOnSyncThrows_thenItIsLogged() throws Exception {
    Lines log = new Lines();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server, log)) {
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "]", Map.of("Sync-Token", "t1")));
      try (ListPoller.Subscription loop = api.mapsSync().start(Duration.ofSeconds(30), result -> {
        throw new IllegalStateException("cache full");
      }, error -> {})) {
        waitFor("the warning", () -> !log.warnings().isEmpty(), log.lines);
        assertTrue(log.warnings().get(0).contains("the onSync listener of ListSync.start threw java.lang.IllegalStateException: cache full"),
            log.warnings().get(0));
        assertTrue(!loop.isClosed());
      }
    }
  }

  @Test
  void whenDurableWritesOutcomeListenerThrows_thenItIsLogged_andTheNextWriteIsStillReported(@org.junit.jupiter.api.io.TempDir java.nio.file.Path directory)
      throws Exception {
    Lines log = new Lines();
    String reward = "{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}";
    List<Boolean> outcomes = new CopyOnWriteArrayList<>();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server, log)) {
      server.route("POST", ScriptedServer.Reply.of(201, reward, Map.of()));
      try (DurableWrites writes = DurableWrites.open(api, directory, outcome -> {
        outcomes.add(outcome.succeeded());
        throw new IllegalStateException("scoreboard gone");
      }, Duration.ofMillis(50), Duration.ofHours(23))) {
        writes.createRewardLog(NewRewardLog.now(1, 42)).get(10, java.util.concurrent.TimeUnit.SECONDS);
        writes.createRewardLog(NewRewardLog.now(1, 43)).get(10, java.util.concurrent.TimeUnit.SECONDS);
        waitFor("both outcomes", () -> outcomes.size() == 2 && log.warnings().size() == 2, log.lines);
      }
      assertTrue(log.warnings().get(0).contains("the outcome listener of DurableWrites") && log.warnings().get(0).endsWith("[scoreboard gone]"),
          log.warnings().get(0));
    }
  }

  @Test
  void theDefaultLogIsJavaUtilLoggingsCommunityApi_whichRelocationDoesNotRename() throws Exception {
    List<LogRecord> records = new CopyOnWriteArrayList<>();
    Logger logger = Logger.getLogger("community-api");
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        records.add(record);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(handler);
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(ScriptedServer.Reply.of(403, "{\"code\":403,\"message\":\"Forbidden\"}", Map.of()));
      api.subscribe(List.of("api_user.created"), event -> {});
      waitFor("the warning", () -> !records.isEmpty(), records);
      assertEquals(java.util.logging.Level.WARNING, records.get(0).getLevel());
      assertTrue(records.get(0).getMessage().contains("may not see some of these event types"), records.get(0).getMessage());
    } finally {
      logger.removeHandler(handler);
    }
  }

  @Test
  void whenAThreadNamePrefixIsSet_thenTheClientsThreadsCarryIt() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").threadNamePrefix("RewardsPlugin-api").build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
      api.getAllMaps().get();
      List<String> names = Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("RewardsPlugin-api-")).toList();
      assertTrue(!names.isEmpty(), Thread.getAllStackTraces().keySet().toString());
    }
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("http://127.0.0.1:1/api", "gsk_test").threadNamePrefix("bad name"));
  }
}
