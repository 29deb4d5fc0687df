package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
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
  void whenTheClientIsClosedWhileACallIsInFlight_thenThatCallFailsSayingSo() throws IOException {
    try (ScriptedServer server = new ScriptedServer()) {
      server.script.add(new Reply(200, "[]", Map.of(), Duration.ofMillis(300)));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
      var inFlight = api.getAllMaps();
      api.close();
      ApiException e = assertThrows(ApiException.class, () -> CommunityApi.Blocking.await(inFlight));
      assertEquals(ApiException.Kind.UNEXPECTED, e.kind());
      assertEquals("java.lang.IllegalStateException: this CommunityApi is closed", e.getMessage());
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
    assertEquals(ApiException.Kind.UNEXPECTED, e.kind());
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  @Test
  void whenTheBaseUrlIsNotHttp_thenTheBuilderRefusesIt() {
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("api.example.org", "gsk_test"));
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("https://api.example.org/api", " "));
  }
}
