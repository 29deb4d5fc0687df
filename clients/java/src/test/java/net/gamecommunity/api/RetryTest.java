package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The retry rules, against a scripted HTTP server: a live service cannot be made to fail once and then
 * succeed on cue. What the live service does on a replay is checked in {@link LiveApiTest}.
 */
class RetryTest {
  private static final String LOG = "{\"id\":1,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}";
  private static final String UNAVAILABLE = "{\"code\":503,\"message\":\"Database unavailable, retry later\"}";
  private static final RetryPolicy FAST = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(5));

  private ScriptedServer server;
  private CommunityApi api;

  @BeforeEach
  void start() throws IOException {
    server = new ScriptedServer();
    api = client(FAST, Duration.ofSeconds(10));
  }

  private CommunityApi client(RetryPolicy policy, Duration requestTimeout) {
    return CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(policy).requestTimeout(requestTimeout).build();
  }

  @AfterEach
  void stop() {
    api.close();
    server.close();
  }

  @Test
  void whenAPostMeets503_thenItIsSentAgainWithTheSameIdempotencyKey_andSucceeds() {
    server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of("Retry-After", "0")));
    server.script.add(ScriptedServer.Reply.of(201, LOG, Map.of("Idempotent-Replayed", "true")));
    Created<RewardLog> created = api.blocking().createRewardLog(NewRewardLog.now(1, 42));
    assertEquals(42, created.value().rewardId());
    assertTrue(created.replayed());
    assertEquals(2, server.received.size());
    assertEquals(created.idempotencyKey(), server.received.get(0).get("idempotencyKey"));
    assertEquals(created.idempotencyKey(), server.received.get(1).get("idempotencyKey"));
    assertEquals("gsk_test", server.received.get(0).get("apiKey"));
  }

  @Test
  void whenTwoPostsAreMade_thenEachHasItsOwnIdempotencyKey() {
    server.script.add(ScriptedServer.Reply.of(201, LOG, Map.of()));
    server.script.add(ScriptedServer.Reply.of(201, LOG, Map.of()));
    api.blocking().createRewardLog(NewRewardLog.now(1, 42));
    api.blocking().createRewardLog(NewRewardLog.now(1, 42));
    assertNotEquals(server.received.get(0).get("idempotencyKey"), server.received.get(1).get("idempotencyKey"));
  }

  @Test
  void whenA429SaysRetryAfter1_thenTheRetryWaitsThatSecond() {
    server.script.add(ScriptedServer.Reply.of(429, "{\"code\":429,\"message\":\"Too many requests\"}", Map.of("Retry-After", "1")));
    server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
    long started = System.nanoTime();
    assertEquals(List.of(), api.blocking().getAllMaps());
    assertTrue(Duration.ofNanos(System.nanoTime() - started).toMillis() >= 950, "retried before Retry-After");
    assertEquals(2, server.received.size());
  }

  @Test
  void whenRetryAfterIsLongerThanThePolicyWaits_thenTheCallFailsAtOnce_withTheWait() {
    server.script.add(ScriptedServer.Reply.of(429, "{\"code\":429,\"message\":\"Too many requests\"}", Map.of("Retry-After", "60")));
    ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
    assertEquals(ApiException.Kind.RATE_LIMITED, e.kind());
    assertEquals(Duration.ofSeconds(60), e.retryAfter().orElseThrow());
    assertEquals("req-1", e.requestId().orElseThrow());
    assertEquals(1, server.received.size());
  }

  @Test
  void whenEveryAttemptMeets503_thenAttemptsStopAtTheBound_andThe503IsThrown() {
    for (int i = 0; i < 5; i++) server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of()));
    ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllPlayers());
    assertEquals(ApiException.Kind.UNAVAILABLE, e.kind());
    assertEquals("Database unavailable, retry later", e.getMessage());
    assertEquals(3, server.received.size());
  }

  @ParameterizedTest
  @ValueSource(ints = {502, 504})
  void whenAProxyAnswers502Or504_thenAGetAndAKeyedPostAreRetriedLike503(int status) {
    String proxyPage = "<html>Bad gateway</html>";
    server.script.add(ScriptedServer.Reply.of(status, proxyPage, Map.of()));
    server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
    assertEquals(List.of(), api.blocking().getAllMaps());
    server.script.add(ScriptedServer.Reply.of(status, proxyPage, Map.of()));
    server.script.add(ScriptedServer.Reply.of(201, LOG, Map.of()));
    Created<RewardLog> created = api.blocking().createRewardLog(NewRewardLog.now(1, 42));
    assertEquals(4, server.received.size());
    assertEquals(created.idempotencyKey(), server.received.get(2).get("idempotencyKey"));
    assertEquals(created.idempotencyKey(), server.received.get(3).get("idempotencyKey"));
  }

  @ParameterizedTest
  @ValueSource(ints = {500, 502, 504})
  void whenEveryAttemptMeetsA5xx_thenTheCallFailsAsServerError(int status) {
    for (int i = 0; i < 3; i++) server.script.add(ScriptedServer.Reply.of(status, "{\"code\":" + status + ",\"message\":\"boom\"}", Map.of()));
    ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
    assertEquals(ApiException.Kind.SERVER_ERROR, e.kind());
    assertEquals(status, e.status());
    assertEquals(status == 500 ? 1 : 3, server.received.size(), "a 500 is the service's own failure: not retried");
  }

  @Test
  void whenAPatchMeets503_thenItIsNotRetried_unlessTheCallerAskedFor() {
    server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of()));
    assertThrows(ApiException.class, () -> api.blocking().updateWorld(WorldUpdate.of(4).state("loaded").build()));
    assertEquals(1, server.received.size());
    assertEquals("null", server.received.get(0).get("idempotencyKey"));

    server.received.clear();
    server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of()));
    server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of()));
    assertThrows(ApiException.class, () -> api.blocking().updateWorld(WorldUpdate.of(4).state("loaded").retryOnFailure().build()));
    assertEquals(3, server.received.size());
  }

  @Test
  void whenAnAttemptTimesOut_thenAGetIsSentAgain() {
    api.close();
    api = client(FAST, Duration.ofSeconds(1));
    server.script.add(new ScriptedServer.Reply(200, "[]", Map.of(), Duration.ofSeconds(5)));
    server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
    server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
    assertEquals(List.of(), api.blocking().getActiveItems());
    assertTrue(server.received.size() >= 2);
  }

  @Test
  void whenNothingListens_thenTheCallFailsAsNetwork_afterTheBoundedAttempts() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    try (CommunityApi nowhere = CommunityApi.builder("http://127.0.0.1:" + closedPort + "/api", "gsk_test").retryPolicy(FAST).build()) {
      ApiException e = assertThrows(ApiException.class, () -> nowhere.blocking().getAllMaps());
      assertEquals(ApiException.Kind.NETWORK, e.kind());
      assertEquals(0, e.status());
      assertTrue(e.getMessage().contains("after 3 attempt(s)"), e.getMessage());
      assertTrue(e.getMessage().contains("127.0.0.1:" + closedPort), e.getMessage());
      assertFalse(e.requestId().isPresent());
    }
  }

  @Test
  void whenTheBodyIsNotTheDocumentedShape_thenTheCallFailsAsInvalidResponse() {
    server.script.add(ScriptedServer.Reply.of(200, "[{\"id\":6,\"name\":\"Sky run\",\"enable\":\"yes\",\"spawnLocation\":null,\"difficulty\":null}]", Map.of()));
    ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
    assertEquals(ApiException.Kind.INVALID_RESPONSE, e.kind());
    assertTrue(e.getMessage().contains("$[0].enable: expected a boolean"), e.getMessage());
    assertNotNull(e.getCause());
  }

  @Test
  void whenADeadlineIsGiven_thenNoRetryStartsThatWouldEndAfterIt_andTheLastAnswerIsTheFailure() {
    RetryPolicy patient = new RetryPolicy(4, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(30));
    try (CommunityApi slow = client(patient, Duration.ofSeconds(10))) {
      for (int i = 0; i < 4; i++) server.script.add(ScriptedServer.Reply.of(503, UNAVAILABLE, Map.of("Retry-After", "2")));
      ApiException e = assertThrows(ApiException.class,
          () -> CommunityApi.Blocking.await(slow.withDeadline(Duration.ofSeconds(1)).getAllMaps()));
      assertEquals(ApiException.Kind.UNAVAILABLE, e.kind());
      assertEquals(1, server.received.size(), "a retry 2 s later would end after the 1 s deadline");
    }
  }

  @Test
  void whenAnAttemptOutlastsTheDeadline_thenTheCallFailsAsNetworkAtTheDeadline() {
    server.script.add(new ScriptedServer.Reply(200, "[]", Map.of(), Duration.ofSeconds(5)));
    ApiException e = assertThrows(ApiException.class,
        () -> CommunityApi.Blocking.await(api.withDeadline(Duration.ofMillis(300)).getAllMaps()));
    assertEquals(ApiException.Kind.NETWORK, e.kind());
    assertTrue(e.getMessage().contains("timed out"), e.getMessage());
  }
}
