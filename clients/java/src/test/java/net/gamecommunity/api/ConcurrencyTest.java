package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The bound on requests in flight, and blocking() where it could wait for itself. */
class ConcurrencyTest {
  @Test
  void whenMoreCallsAreMadeThanTheBound_thenAtMostThatManyAreInFlight_andTheOthersWaitTheirTurn() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").maxConcurrentRequests(3).build()) {
      assertEquals(List.of(3, 12), burst(server, api, 12));
    }
    // The default: 16 of a 40-join burst at once.
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").build()) {
      assertEquals(List.of(16, 40), burst(server, api, 40));
    }
  }

  @Test
  void whenOneRequestMayBeInFlight_thenTheWaitingOnesGoInTheOrderTheyWereMade() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").maxConcurrentRequests(1).build()) {
      burst(server, api, 6);
      List<String> order = server.received.stream().map(r -> r.get("uri")).toList();
      for (int i = 0; i < 6; i++) assertEquals("/api/player/get-player-by-nick?nick=player" + i, order.get(i));
    }
  }

  /** {@code calls} lookups at once, each answered in 100 ms: the most the service saw at once, and how many it saw. */
  private static List<Integer> burst(ScriptedServer server, CommunityApi api, int calls) throws Exception {
    for (int i = 0; i < calls; i++) server.script.add(new ScriptedServer.Reply(404, "{\"code\":404,\"message\":\"Player not found\"}", Map.of(), Duration.ofMillis(100)));
    List<CompletableFuture<?>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) futures.add(api.findPlayerByNick("player" + i));
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    return List.of(server.mostInFlight.get(), server.received.size());
  }

  @Test
  void whenTheBoundIsNotPositive_thenTheBuilderRefusesIt() {
    assertThrows(IllegalArgumentException.class, () -> CommunityApi.builder("http://127.0.0.1:9/api", "gsk_test").maxConcurrentRequests(0));
  }

  @Test
  void whenBlockingIsCalledInACallbackOnTheClientsThreads_orOnItsExecutor_thenItThrows_ratherThanWaitForItself() throws Exception {
    ExecutorService io = Executors.newFixedThreadPool(1, r -> new Thread(r, "plugin-io"));
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi own = CommunityApi.builder(server.baseUrl(), "gsk_test").build();
        CommunityApi given = CommunityApi.builder(server.baseUrl(), "gsk_test").executor(io).build()) {
      server.route("GET", ScriptedServer.Reply.of(200, "[]", Map.of()));
      // A callback without a callback executor runs on the client's threads.
      ExecutionException inCallback = assertThrows(ExecutionException.class,
          () -> own.getAllMaps().thenApply(maps -> own.blocking().getAllMaps()).get(10, TimeUnit.SECONDS));
      assertTrue(inCallback.getCause() instanceof IllegalStateException, String.valueOf(inCallback.getCause()));
      assertTrue(inCallback.getCause().getMessage().startsWith("blocking() called on a thread of the client's executor"), inCallback.getCause().getMessage());
      // On the one thread of the builder's executor, a wait for a call that needs that thread: refused at once, not a deadlock.
      ExecutionException onItsPool = assertThrows(ExecutionException.class,
          () -> given.getAllMaps().thenApply(maps -> given.blocking().getAllMaps()).get(10, TimeUnit.SECONDS));
      assertTrue(onItsPool.getCause() instanceof IllegalStateException, String.valueOf(onItsPool.getCause()));
      assertEquals("plugin-io", given.getAllMaps().thenApply(maps -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS));
      // From a thread of the plugin's own, as ever.
      assertEquals(List.of(), given.blocking().getAllMaps());
    } finally {
      io.shutdownNow();
    }
  }
}
