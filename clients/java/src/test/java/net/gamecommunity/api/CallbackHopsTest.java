package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * With a callback executor (a game's main thread, where each task is a tick), a call costs it one task: the
 * plugin's own callback. The client's internal stages (decoding, mapping, the Optional of a find) run on its
 * own threads.
 */
class CallbackHopsTest {
  private static final String STEVE = "{\"id\":1,\"pseudo\":\"Steve\",\"credit\":120,\"gradeId\":2,\"modStatus\":false,\"staff\":true,"
      + "\"alert\":true,\"nickname\":\"Stevie\",\"status\":\"Online\",\"chatId\":null,\"language\":\"FR\",\"streamerPoint\":0,"
      + "\"tag\":null,\"color\":null,\"highclub\":false,\"vote\":14}";
  private static final String LOG = "{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}";

  @Test
  void whenACallbackExecutorIsGiven_thenEachCallCostsItOneTask_thePluginsCallback() throws Exception {
    ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "server-main"));
    AtomicInteger tasks = new AtomicInteger();
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE)
            .callbackExecutor(task -> {
              tasks.incrementAndGet();
              main.execute(task);
            }).build()) {
      Map<String, Function<CommunityApi, CompletableFuture<?>>> calls = new LinkedHashMap<>();
      calls.put("getPlayerByNick", a -> a.getPlayerByNick("Steve"));
      calls.put("findPlayerByNick", a -> a.findPlayerByNick("Steve"));
      calls.put("findPlayerByPseudo, not found", a -> a.findPlayerByPseudo("Stevie"));
      calls.put("getPlayerByNick, not found", a -> a.getPlayerByNick("Nobody"));
      calls.put("getAllMaps", CommunityApi::getAllMaps);
      calls.put("createRewardLog", a -> a.createRewardLog(NewRewardLog.now(1, 42)));
      calls.put("getPlayerByNick(null)", a -> a.getPlayerByNick(null));
      Map<String, Integer> counted = new LinkedHashMap<>();
      for (Map.Entry<String, Function<CommunityApi, CompletableFuture<?>>> call : calls.entrySet()) {
        String name = call.getKey();
        server.script.add(name.contains("not found") ? ScriptedServer.Reply.of(404, "{\"code\":404,\"message\":\"Player not found\"}", Map.of())
            : ScriptedServer.Reply.of(name.equals("createRewardLog") ? 201 : 200, name.equals("getAllMaps") ? "[]" : name.equals("createRewardLog") ? LOG : STEVE, Map.of()));
        tasks.set(0);
        // The plugin's one callback, as the README writes it.
        String ranOn = call.getValue().apply(api).handle((value, failure) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
        assertEquals("server-main", ranOn, name);
        main.submit(() -> {}).get(10, TimeUnit.SECONDS);
        counted.put(name, tasks.get());
      }
      Map<String, Integer> one = new LinkedHashMap<>();
      calls.keySet().forEach(name -> one.put(name, 1));
      assertEquals(one, counted);
    } finally {
      main.shutdownNow();
    }
  }
}
