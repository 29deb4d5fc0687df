package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
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
