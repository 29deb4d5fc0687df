package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The sync protocol's client side, against a scripted server: pages, tokens, 410, failures and filters. */
class ListSyncTest {
  private static final String SKY = "{\"id\":6,\"name\":\"Sky run\",\"enable\":true,\"spawnLocation\":null,\"difficulty\":\"hard\"}";
  private static final String SKY_OFF = "{\"id\":6,\"name\":\"Sky run\",\"enable\":false,\"spawnLocation\":null,\"difficulty\":\"hard\"}";
  private static final String FIRST = "{\"id\":7,\"name\":\"First steps\",\"enable\":false,\"spawnLocation\":null,\"difficulty\":null}";

  private static ScriptedServer.Reply list(String rows, String token, String next) {
    Map<String, String> headers = next == null ? Map.of("Sync-Token", token) : Map.of("Sync-Token", token, "Link", "<" + next + ">; rel=\"next\"");
    return ScriptedServer.Reply.of(200, "[" + rows + "]", headers);
  }

  private static <T> T await(CompletableFuture<T> future) {
    try {
      return future.join();
    } catch (CompletionException e) {
      throw ApiException.unwrap(e);
    }
  }

  @Test
  void whenSynced_thenTheWholeListIsWalkedInPages_thenOnlyChangesAreAsked_andA410RebuildsTheCache() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      ListSync<Integer, ParkourMap> maps = api.mapsSync();
      server.script.add(list(SKY, "s1.A", "get-all-maps?limit=1000&cursor=c1.page%2B2"));
      server.script.add(list(FIRST, "s1.A", null));
      ListSync.Result<ParkourMap> first = await(maps.sync());
      assertTrue(first.full());
      assertEquals(List.of(6, 7), first.changed().stream().map(ParkourMap::id).toList());
      assertEquals(2, maps.rows().size());
      assertEquals("s1.A", maps.token());
      assertEquals("/api/parkour/get-all-maps?limit=1000", server.received.get(0).get("uri"));
      assertEquals("/api/parkour/get-all-maps?cursor=c1.page%2B2&limit=1000", sortedQuery(server.received.get(1).get("uri")));

      server.script.add(list(SKY_OFF, "s1.B", null));
      ListSync.Result<ParkourMap> changes = await(maps.sync());
      assertFalse(changes.full());
      assertEquals(1, changes.changed().size());
      assertFalse(maps.rows().get(6).enable());
      assertEquals("/api/parkour/get-all-maps?limit=1000&since=s1.A", sortedQuery(server.received.get(2).get("uri")));

      // Rows were deleted since s1.B: the whole list again, and the cache is what it says.
      server.script.add(ScriptedServer.Reply.of(410, "{\"code\":410,\"message\":\"since: rows of this list were deleted after this token was given; take the full list again, without since\"}", Map.of()));
      server.script.add(list(FIRST, "s1.C", null));
      ListSync.Result<ParkourMap> rebuilt = await(maps.sync());
      assertTrue(rebuilt.full());
      assertEquals(List.of(7), List.copyOf(maps.rows().keySet()));
      assertEquals("s1.C", maps.token());
      assertEquals("/api/parkour/get-all-maps?limit=1000", server.received.get(4).get("uri"));

      // A failure leaves the cache and its token as they were.
      server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of()));
      assertEquals(ApiException.Kind.UNAVAILABLE, assertThrows(ApiException.class, () -> await(maps.sync())).kind());
      assertEquals(List.of(7), List.copyOf(maps.rows().keySet()));
      assertEquals("s1.C", maps.token());
    }
  }

  @Test
  void whenAFilteredListIsSynced_thenRowsThatLeftTheFilterLeaveTheCache() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      String active = item("1", now.minusSeconds(60), now.plusSeconds(3600));
      String ended = item("2", now.minusSeconds(3600), now.minusSeconds(1));
      ListSync<String, TemporaryItem> items = api.activeItemsSync();
      server.script.add(list(active + "," + ended, "s1.A", null));
      assertEquals(2, await(items.sync()).changed().size());
      assertEquals(List.of("1"), List.copyOf(items.rows().keySet()));
    }
  }

  @Test
  void whenSyncIsCalledWhileOneRuns_thenTheRunningOneIsReturned() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      ListSync<Integer, ParkourMap> maps = api.mapsSync();
      server.script.add(new ScriptedServer.Reply(200, "[" + SKY + "]", Map.of("Sync-Token", "s1.A"), java.time.Duration.ofMillis(300)));
      CompletableFuture<ListSync.Result<ParkourMap>> one = maps.sync();
      assertSame(one, maps.sync());
      await(one);
      assertEquals(1, server.received.size());
    }
  }

  @Test
  void whenTheLinkIsRelative_thenItsCursorIsRead_andWithoutOneThereIsNoNextPage() {
    URI asked = URI.create("http://127.0.0.1:1/api/player/get-all-players?limit=5");
    assertEquals("c1.x+y", ListSync.nextCursor(asked, "<get-all-players?limit=5&cursor=c1.x%2By>; rel=\"next\""));
    assertEquals(null, ListSync.nextCursor(asked, null));
    assertEquals(null, ListSync.nextCursor(asked, "<get-all-players?limit=5>; rel=\"prev\""));
  }

  private static String item(String id, Instant start, Instant end) {
    return "{\"id\":\"" + id + "\",\"itemName\":\"i" + id + "\",\"itemDescription\":\"d\",\"price\":1,\"startDate\":\"" + start + "\",\"endDate\":\"" + end + "\"}";
  }

  /** The URI with its query's parameters in name order (the client sends them in no set order). */
  private static String sortedQuery(String uri) {
    int q = uri.indexOf('?');
    if (q < 0) return uri;
    return uri.substring(0, q + 1) + String.join("&", java.util.Arrays.stream(uri.substring(q + 1).split("&")).sorted().toList());
  }

  @Test
  void whenASyncMeets503WithRetryAfter_thenTheLoopWaitsThatLong_notItsInterval() throws Exception {
    try (ScriptedServer server = new ScriptedServer();
        CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build()) {
      server.script.add(list(SKY, "t1", null));
      server.script.add(ScriptedServer.Reply.of(503, "{\"code\":503,\"message\":\"Database unavailable, retry later\"}", Map.of("Retry-After", "30")));
      List<ApiException> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
      try (ListPoller.Subscription loop = api.mapsSync().start(java.time.Duration.ofMillis(10), r -> {}, errors::add)) {
        assertFalse(loop.isClosed());
        while (errors.isEmpty()) Thread.sleep(10);
        Thread.sleep(500); // 50 intervals
        assertEquals(2, server.received.size());
      }
    }
  }

  @Test
  void whenTheClientHasACallbackExecutor_thenOnSyncRunsOnIt_andTheLoopsAreClosedWithTheClient() throws Exception {
    java.util.concurrent.ExecutorService main = java.util.concurrent.Executors.newSingleThreadExecutor(r -> new Thread(r, "game-main-thread"));
    try (ScriptedServer server = new ScriptedServer()) {
      server.route("GET", list(SKY, "t1", null));
      CommunityApi api = CommunityApi.builder(server.baseUrl(), "gsk_test").callbackExecutor(main).build();
      CompletableFuture<String> syncedOn = new CompletableFuture<>();
      ListPoller.Subscription syncing = api.mapsSync().start(java.time.Duration.ofSeconds(30),
          r -> syncedOn.complete(Thread.currentThread().getName()), e -> syncedOn.completeExceptionally(e));
      ListPoller.Subscription polling = api.mapsPoller().start(java.time.Duration.ofSeconds(30), maps -> {}, e -> {});
      assertEquals("game-main-thread", syncedOn.get(10, java.util.concurrent.TimeUnit.SECONDS));
      assertThrows(NullPointerException.class, () -> api.mapsSync().start(java.time.Duration.ofSeconds(1), null, e -> {}));
      assertThrows(NullPointerException.class, () -> api.mapsPoller().start(null, maps -> {}, e -> {}));
      assertFalse(syncing.isClosed());
      api.close();
      assertTrue(syncing.isClosed());
      assertTrue(polling.isClosed());
    } finally {
      main.shutdownNow();
    }
  }
}
