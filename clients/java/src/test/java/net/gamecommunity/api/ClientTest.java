package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import net.gamecommunity.api.ScriptedServer.Reply;
import org.junit.jupiter.api.Test;

class ClientTest {
  @Test
  void whenACallIsSent_thenItCarriesTheKeyAndThePluginsUserAgent_andTheKeyStaysOutOfToString() throws IOException {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl() + "/", "gsk_secret").userAgent("MyPlugin/2.1").build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
      api.blocking().getAllMaps();
      assertEquals("gsk_secret", server.received.get(0).get("apiKey"));
      assertTrue(server.received.get(0).get("userAgent").startsWith("MyPlugin/2.1 game-community-api-java/"), server.received.get(0).get("userAgent"));
      assertTrue(!api.toString().contains("gsk_secret"));
    }
  }

  @Test
  void whenACallbackOfTheCallerThrows_thenUnwrapGivesAnUnexpectedApiExceptionWithThatCause() throws IOException {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(ScriptedServer.Reply.of(200, "[]", Map.of()));
      ApiException e = api.getAllMaps()
          .<Void>thenApply(maps -> { throw new IllegalStateException("plugin bug"); })
          .handle((ok, failure) -> ApiException.unwrap(failure))
          .join();
      assertEquals(ApiException.Kind.UNEXPECTED, e.kind());
      assertInstanceOf(IllegalStateException.class, e.getCause());
    }
  }

  @Test
  void whenAnAnswerArrives_thenCallbacksRunOnTheClientsThreads_orOnTheExecutorItWasGiven() throws IOException {
    Reply slow = new Reply(200, "[]", Map.of(), Duration.ofMillis(200));
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(slow);
      String thread = api.getAllMaps().thenApply(maps -> Thread.currentThread().getName()).join();
      assertTrue(thread.startsWith("community-api-"), thread);
    }
    ExecutorService mine = Executors.newSingleThreadExecutor(r -> new Thread(r, "my-plugin-io"));
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").executor(mine).build()) {
      server.script.add(slow);
      assertEquals("my-plugin-io", api.getAllMaps().thenApply(maps -> Thread.currentThread().getName()).join());
    } finally {
      mine.shutdown();
    }
  }


  @Test
  void whenTheServiceHasNoSuchRoute_thenTheKindIsNotNotFound_andTheMessageSaysToCheckTheBaseUrl() throws IOException {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(Reply.of(404, "{\"code\":404,\"message\":\"No route GET /parkour/get-all-maps\"}", Map.of()));
      server.script.add(Reply.of(404, "{\"code\":404,\"message\":\"Player not found\"}", Map.of()));
      ApiException wrongUrl = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
      assertEquals(ApiException.Kind.OTHER_STATUS, wrongUrl.kind());
      assertEquals(404, wrongUrl.status());
      assertTrue(wrongUrl.getMessage().contains("is the base URL right?"), wrongUrl.getMessage());
      assertEquals(ApiException.Kind.NOT_FOUND, assertThrows(ApiException.class, () -> api.blocking().getPlayerByNick("nobody")).kind());
    }
  }

  @Test
  void whenABlockingCallFails_thenTheStackTraceLeadsToTheCallersLine() throws IOException {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(Reply.of(404, "{\"code\":404,\"message\":\"Player not found\"}", Map.of()));
      ApiException e = assertThrows(ApiException.class, () -> api.blocking().getPlayerByNick("nobody"));
      assertTrue(java.util.Arrays.stream(e.getStackTrace()).anyMatch(f -> f.getMethodName().contains("whenABlockingCallFails")),
          java.util.Arrays.toString(e.getStackTrace()));
      assertEquals("Player not found", e.getMessage());
      assertEquals("req-1", e.requestId().orElseThrow());
    }
  }

  @Test
  void whenTheClientIsClosed_thenCallsFailAtOnce() {
    CommunityApi api = CommunityApi.builder("http://127.0.0.1:9/api", "gsk_test").build();
    api.close();
    ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
    assertEquals(ApiException.Kind.CLOSED, e.kind());
  }

  @Test
  void whenTheBaseUrlIsNotHttp_thenTheBuilderRefusesIt() {
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("api.example.org", "gsk_test"));
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("https://api.example.org/api", " "));
  }

  private static final String MAP = "{\"id\":6,\"name\":\"Sky run\",\"enable\":true,\"spawnLocation\":null,\"difficulty\":\"hard\"}";

  @Test
  void whenAnAnswerHasAFieldThisClientDoesNotKnow_thenItIsIgnored_unlessDecodingIsStrict() throws IOException {
    String added = "[" + MAP.replace("}", ",\"discordId\":\"123\"}") + "]";
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
        CommunityApi strict = CommunityApi.builder(server.baseUrl(), "gsk_test").strictDecoding(true).build()) {
      server.script.add(Reply.of(200, added, Map.of()));
      server.script.add(Reply.of(200, added, Map.of()));
      server.script.add(Reply.of(200, "[" + MAP.replace(",\"difficulty\":\"hard\"", "") + "]", Map.of()));
      assertEquals("Sky run", api.blocking().getAllMaps().get(0).name());
      ApiException e = assertThrows(ApiException.class, () -> strict.blocking().getAllMaps());
      assertEquals(ApiException.Kind.INVALID_RESPONSE, e.kind());
      assertTrue(e.getMessage().contains("unknown field(s) discordId"), e.getMessage());
      ApiException missing = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
      assertTrue(missing.getMessage().contains("$[0].difficulty: missing"), missing.getMessage());
    }
  }

  @Test
  void whenTheHostNameDoesNotResolve_thenTheFailureSaysSo_notThatTheConnectionFailed() {
    // .invalid never resolves (RFC 6761).
    try (CommunityApi api = CommunityApi.builder("http://community-api.invalid/api", "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      ApiException e = assertThrows(ApiException.class, () -> api.blocking().getAllMaps());
      assertEquals(ApiException.Kind.NETWORK, e.kind());
      assertEquals("GET /api/parkour/get-all-maps to community-api.invalid:80 failed: the name community-api.invalid does not resolve"
          + " (DNS: a typo in the URL, or no network) after 1 attempt(s)", e.getMessage());
    }
  }

  @Test
  void whenAConnectionIsRefused_thenTheFailureCompletesOnTheClientsExecutor_orTheCallbackExecutor() throws Exception {
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    String nowhere = "http://127.0.0.1:" + closedPort + "/api";
    ExecutorService mine = Executors.newSingleThreadExecutor(r -> new Thread(r, "my-plugin-io"));
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "server-main"));
    try (CommunityApi api = CommunityApi.builder(nowhere, "gsk_test").retryPolicy(RetryPolicy.NONE).executor(mine).build();
        CommunityApi onMain = CommunityApi.builder(nowhere, "gsk_test").retryPolicy(RetryPolicy.NONE).callbackExecutor(main).build()) {
      assertEquals("my-plugin-io", api.getAllMaps().handle((ok, failure) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS));
      assertEquals("server-main", onMain.getAllMaps().handle((ok, failure) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS));
      ApiException refused = assertThrows(ApiException.class, () -> onMain.blocking().getAllMaps());
      assertEquals(ApiException.Kind.NETWORK, refused.kind());
      assertEquals("GET /api/parkour/get-all-maps to 127.0.0.1:" + closedPort + " failed: could not connect (refused: nothing listens there,"
          + " or a firewall) after 1 attempt(s)", refused.getMessage());
    } finally {
      mine.shutdown();
      main.shutdown();
    }
  }

  @Test
  void whenAnAnswerArrives_thenItCompletesOnTheCallbackExecutor_whileBlockingCallsDoNotNeedIt() throws Exception {
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "server-main"));
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(main).build()) {
      for (int i = 0; i < 3; i++) server.script.add(Reply.of(200, "[]", Map.of()));
      assertEquals("server-main", api.getAllMaps().thenApply(maps -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS));
      // Every derived stage too (handle, exceptionally…): join() one on that thread and it waits for itself.
      assertEquals("server-main", api.getAllMaps().handle((maps, failure) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS));
      // Waiting on the callback executor's own thread: a completion queued to it would never run.
      assertEquals(List.of(), main.submit(() -> api.blocking().getAllMaps()).get(10, TimeUnit.SECONDS));
    } finally {
      main.shutdown();
    }
  }

  @Test
  void whenAnArgumentIsNull_thenTheFutureFails_notTheCaller() throws Exception {
    try (CommunityApi api = CommunityApi.builder("http://127.0.0.1:9/api", "gsk_test").build()) {
      CompletableFuture<PlayerSummary> lookup = api.getPlayerByNick(null);
      ApiException e = ApiException.unwrap(assertThrows(ExecutionException.class, () -> lookup.get(10, TimeUnit.SECONDS)));
      assertEquals(ApiException.Kind.INVALID_ARGUMENT, e.kind());
      assertTrue(e.getMessage().startsWith("nick:"), e.getMessage());
      assertEquals(ApiException.Kind.INVALID_ARGUMENT, assertThrows(ApiException.class, () -> api.blocking().createRewardLog(null)).kind());
      assertEquals(ApiException.Kind.INVALID_ARGUMENT,
          assertThrows(ApiException.class, () -> api.blocking().createRewardLog(NewRewardLog.now(1, 2), null)).kind());
      assertEquals(ApiException.Kind.INVALID_ARGUMENT, assertThrows(ApiException.class, () -> api.blocking().updateWorld(null)).kind());
    }
  }

  @Test
  void whenTheServiceNamesItsError_thenErrorGivesTheName_and410And422HaveTheirKinds() throws IOException {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      server.script.add(Reply.of(409, "{\"code\":409,\"message\":\"playerId: no player has id 77\"}", Map.of("Error-Name", "REFERENCE_NOT_FOUND")));
      server.script.add(Reply.of(422, "{\"code\":422,\"message\":\"Idempotency-Key already used\"}", Map.of("Error-Name", "IDEMPOTENCY_KEY_REUSED")));
      server.script.add(Reply.of(410, "{\"code\":410,\"message\":\"since: too old\"}", Map.of("Error-Name", "SYNC_TOKEN_EXPIRED")));
      server.script.add(Reply.of(409, "{\"code\":409,\"message\":\"no name\"}", Map.of()));
      ApiException reference = assertThrows(ApiException.class, () -> api.blocking().createRewardLog(NewRewardLog.now(77, 1)));
      assertEquals(ApiException.Kind.CONFLICT, reference.kind());
      assertEquals("REFERENCE_NOT_FOUND", reference.error().orElseThrow());
      assertTrue(reference.toString().contains("REFERENCE_NOT_FOUND"), reference.toString());
      assertEquals(ApiException.Kind.UNPROCESSABLE, assertThrows(ApiException.class, () -> api.blocking().createRewardLog(NewRewardLog.now(1, 1))).kind());
      assertEquals(ApiException.Kind.GONE, assertThrows(ApiException.class, () -> api.blocking().getAllMaps()).kind());
      assertTrue(assertThrows(ApiException.class, () -> api.blocking().createRewardLog(NewRewardLog.now(1, 1))).error().isEmpty());
    }
  }

  @Test
  void whenAnAnswerCarriesTheRateLimit_thenTheClientExposesTheBudgetLeft() throws IOException {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      assertTrue(api.rateLimit().isEmpty());
      server.script.add(Reply.of(200, "[]", Map.of("RateLimit", "\"user\"; r=17; t=42", "RateLimit-Policy", "\"user\"; q=600; w=60")));
      Instant before = Instant.now();
      api.blocking().getAllMaps();
      RateLimit budget = api.rateLimit().orElseThrow();
      assertEquals(17, budget.remaining());
      assertEquals(600, budget.limit());
      assertTrue(!budget.resetsAt().isBefore(before.plusSeconds(42)) && budget.resetsAt().isBefore(Instant.now().plusSeconds(43)), budget.toString());
    }
  }

  @Test
  void whenACallbackIsAttachedAfterTheAnswerCame_thenItStillRunsOnTheClientsThreads_notTheCallers() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      server.script.add(Reply.of(200, "[]", Map.of()));
      CompletableFuture<List<ParkourMap>> maps = api.getAllMaps();
      maps.handle((ok, failure) -> null).get(10, TimeUnit.SECONDS);
      while (!maps.isDone()) Thread.sleep(1);
      // A plain CompletableFuture would run these on this thread (a game's main thread, in a plugin).
      String late = maps.thenApply(m -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
      assertTrue(late.startsWith("community-api-"), late);
      String chained = maps.thenApply(m -> m).exceptionally(f -> null).thenApply(m -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
      assertTrue(chained.startsWith("community-api-"), chained);
    }
  }
}
