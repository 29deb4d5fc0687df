package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Builder.traceContext: the plugin's W3C trace context, read on the calling thread, sent with each attempt of that call; and an event's. */
class TraceContextTest {
  private static final String PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  /** What an OpenTelemetry Context.current() is: the calling thread's. */
  private static final ThreadLocal<Map<String, String>> CURRENT = ThreadLocal.withInitial(Map::of);

  @Test
  void whenACallIsMadeInATrace_thenEveryAttemptCarriesItsTraceparent_andACallOutsideATraceCarriesNone() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").traceContext(CURRENT::get).build()) {
      server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of("Retry-After", "0")));
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
      CURRENT.set(Map.of("traceparent", PARENT, "tracestate", "vendor=abc", "baggage", "user=steve"));
      CompletableFuture<List<ParkourMap>> traced = api.getAllMaps();
      CURRENT.remove();
      traced.get();
      CompletableFuture.runAsync(() -> api.blocking().getAllMaps()).get();
      assertEquals(List.of(PARENT, PARENT, "null"), server.received.stream().map(r -> r.get("traceparent")).toList());
      assertEquals(List.of("vendor=abc", "vendor=abc", "null"), server.received.stream().map(r -> r.get("tracestate")).toList());
    }
  }

  @Test
  void whenTheContextIsMalformedOrItsSupplierThrows_thenTheCallGoesWithoutOne() throws Exception {
    String[] given = {"00-xyz-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", null};
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("GET", ScriptedServer.Reply.of(200, "[]", Map.of()));
      int[] next = {0};
      try (CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").log((level, message, error) -> {})
          .traceContext(() -> {
            String value = given[next[0]++];
            if (value == null) throw new IllegalStateException("no context");
            return Map.of("traceparent", value);
          }).build()) {
        for (int i = 0; i < given.length; i++) api.blocking().getAllMaps();
      }
      assertEquals(List.of("null", "null", "null"), server.received.stream().map(r -> r.get("traceparent")).toList());
    }
  }

  @Test
  void whenAnEventComesWithTheTraceOfItsWrite_thenItsTraceparentIsGiven_andAMalformedOneIsNot() throws Exception {
    String frame = "id: %s\ntraceparent: %s\ndata: {\"type\":\"reward_log.created\",\"timestamp\":\"2026-11-25T10:00:00.000Z\","
        + "\"data\":{\"id\":7,\"playerId\":1,\"rewardId\":7,\"rewardedAt\":\"2026-11-25T10:00:00Z\"}}\n\n";
    String body = String.format(frame, "00000000000000100000000000000001", PARENT) + String.format(frame, "00000000000000100000000000000002", "01-zz")
        + frame.replace("traceparent: %s\n", "").formatted("00000000000000100000000000000003");
    List<Optional<String>> traces = new CopyOnWriteArrayList<>();
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(ScriptedServer.Reply.of(200, body, Map.of()));
      server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"Last-Event-ID: past the retention\"}", Map.of()));
      CountDownLatch three = new CountDownLatch(3);
      api.subscribe(List.of("reward_log.created"), event -> {
        traces.add(event.traceparent());
        three.countDown();
      });
      assertTrue(three.await(10, TimeUnit.SECONDS), "three events");
    }
    assertEquals(List.of(Optional.of(PARENT), Optional.empty(), Optional.empty()), traces);
  }
}
