package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * A plugin's trace through the live service (clients/java/test-live.mjs: a server tracing to a collector):
 * the call made in the plugin's trace is continued by the service, and the event the write recorded comes
 * back on the stream with that trace.
 */
@EnabledIfEnvironmentVariable(named = "COMMUNITY_API_URL", matches = ".+", disabledReason = "needs live servers: node clients/java/test-live.mjs")
class TraceLiveTest {
  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) throw new IllegalStateException(name + " is not set: run the tests with clients/java/test-live.mjs");
    return value;
  }

  private static void waitFor(String what, BooleanSupplier test) throws InterruptedException {
    long until = System.currentTimeMillis() + 30_000;
    while (!test.getAsBoolean()) {
      if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what);
      Thread.sleep(20);
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** The collector's spans of one trace: name, spanId, parentSpanId. */
  private static List<Map<String, String>> spans(String traceId) {
    try {
      String body = HTTP.send(HttpRequest.newBuilder(URI.create(env("COMMUNITY_OTLP_SPANS_URL") + "?trace=" + traceId)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      return JsonParser.parseString(body).getAsJsonArray().asList().stream().map(JsonElement::getAsJsonObject)
          .map(s -> Map.of("name", s.get("name").getAsString(), "spanId", s.get("spanId").getAsString(),
              "parentSpanId", s.has("parentSpanId") ? s.get("parentSpanId").getAsString() : ""))
          .toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void whenAPluginWritesInItsTrace_thenTheServiceContinuesIt_andTheWritesEventComesBackInThatTrace() throws Exception {
    HexFormat hex = HexFormat.of();
    String traceId = hex.formatHex(randomBytes(16));
    String pluginSpan = hex.formatHex(randomBytes(8));
    // What the OpenTelemetry propagator puts in the map, for the span the plugin is in.
    Map<String, String> context = Map.of("traceparent", "00-" + traceId + "-" + pluginSpan + "-01");
    List<Event> events = new CopyOnWriteArrayList<>();
    try (CommunityApi b = CommunityApi.builder(env("COMMUNITY_API_TRACED_URL"), env("COMMUNITY_API_KEY_B")).traceContext(() -> context).build()) {
      EventSubscription subscription = b.subscribe(List.of("reward_log.created"), events::add);
      waitFor("the stream's position", () -> subscription.lastEventId() != null);
      int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
      b.blocking().createRewardLog(NewRewardLog.now(1, rewardId));
      waitFor("the event", () -> events.stream().anyMatch(e -> e.as(RewardLog.class).rewardId() == rewardId));
      Event event = events.stream().filter(e -> e.as(RewardLog.class).rewardId() == rewardId).findFirst().orElseThrow();
      String carried = event.traceparent().orElseThrow(() -> new AssertionError("the event carries no traceparent"));
      assertEquals(traceId, carried.split("-")[1], carried);

      String route = "POST /api/website/create-reward-log";
      waitFor("the service's span at the collector", () -> spans(traceId).stream().anyMatch(s -> s.get("name").equals(route)));
      List<Map<String, String>> trace = spans(traceId);
      Map<String, String> server = trace.stream().filter(s -> s.get("name").equals(route)).findFirst().orElseThrow();
      assertEquals(pluginSpan, server.get("parentSpanId"), trace.toString());
      // The event's traceparent names a span of that trace, under the request.
      assertTrue(trace.stream().anyMatch(s -> s.get("spanId").equals(carried.split("-")[2])), trace + " / " + carried);
    }
  }

  private static byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    ThreadLocalRandom.current().nextBytes(bytes);
    return bytes;
  }
}
