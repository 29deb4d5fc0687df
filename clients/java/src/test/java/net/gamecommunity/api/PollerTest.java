package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The poll loop, against a scripted server: the live service's lists cannot be changed through the API. */
class PollerTest {
  private static final String SKY = "{\"id\":6,\"name\":\"Sky run\",\"enable\":true,\"spawnLocation\":null,\"difficulty\":\"hard\"}";
  private static final String FIRST = "{\"id\":7,\"name\":\"First steps\",\"enable\":false,\"spawnLocation\":null,\"difficulty\":null}";

  @Test
  void whenAPollLoopRuns_thenOnlyChangedListsAreDelivered_failuresGoToOnError_andPollingGoesOn() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "]", Map.of("ETag", "\"maps-1\"")));
      server.script.add(ScriptedServer.Reply.of(304, "", Map.of("ETag", "\"maps-1\"")));
      server.script.add(ScriptedServer.Reply.of(429, "{\"code\":429,\"message\":\"Too many requests\"}", Map.of("Retry-After", "0")));
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "," + FIRST + "]", Map.of("ETag", "\"maps-2\"")));
      server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of()));
      List<List<ParkourMap>> delivered = new CopyOnWriteArrayList<>();
      List<ApiException> errors = new CopyOnWriteArrayList<>();
      ListPoller.Subscription loop = api.mapsPoller().start(Duration.ofMillis(20), delivered::add, errors::add);
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (server.received.size() < 8 && System.nanoTime() < deadline) Thread.sleep(20);
      loop.close();
      assertEquals(List.of(1, 2), delivered.stream().map(List::size).toList());
      List<String> sent = server.received.stream().map(r -> r.get("ifNoneMatch")).limit(5).toList();
      assertEquals(List.of("null", "\"maps-1\"", "\"maps-1\"", "\"maps-1\"", "\"maps-2\""), sent);
      assertEquals(List.of(ApiException.Kind.RATE_LIMITED, ApiException.Kind.UNAVAILABLE), errors.stream().map(ApiException::kind).limit(2).toList());
    }
  }

  @Test
  void whenAPollMeets429WithRetryAfter_thenTheLoopWaitsThatLong_notItsInterval() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "]", Map.of("ETag", "\"maps-1\"")));
      server.script.add(ScriptedServer.Reply.of(429, "{\"code\":429,\"message\":\"Too many requests\"}", Map.of("Retry-After", "30")));
      List<ApiException> errors = new CopyOnWriteArrayList<>();
      try (ListPoller.Subscription loop = api.mapsPoller().start(Duration.ofMillis(10), maps -> {}, errors::add)) {
        assertFalse(loop.isClosed());
        while (errors.isEmpty()) Thread.sleep(10);
        Thread.sleep(500); // 50 intervals
        assertEquals(2, server.received.size());
      }
    }
  }

  @Test
  void whenTheRateBudgetIsSpent_thenTheLoopWaitsForTheWindowToEnd() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[" + SKY + "]", Map.of("ETag", "\"maps-1\"", "RateLimit", "\"user\"; r=0; t=30")));
      List<List<ParkourMap>> delivered = new CopyOnWriteArrayList<>();
      try (ListPoller.Subscription loop = api.mapsPoller().start(Duration.ofMillis(10), delivered::add, e -> {})) {
        assertFalse(loop.isClosed());
        while (delivered.isEmpty()) Thread.sleep(10);
        Thread.sleep(500);
        assertEquals(1, server.received.size());
      }
    }
  }
}
