package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** subscribe() against the live service (run by clients/java/test-live.mjs): events as writes commit, and who may see what. */
@EnabledIfEnvironmentVariable(named = "COMMUNITY_API_URL", matches = ".+", disabledReason = "needs live servers: node clients/java/test-live.mjs")
class EventsLiveTest {
  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) throw new IllegalStateException(name + " is not set: run the tests with clients/java/test-live.mjs");
    return value;
  }

  private static void waitFor(String what, java.util.function.BooleanSupplier test) throws InterruptedException {
    long until = System.currentTimeMillis() + 10_000;
    while (!test.getAsBoolean()) {
      if (System.currentTimeMillis() > until) throw new AssertionError("timed out waiting for " + what);
      Thread.sleep(10);
    }
  }

  @Test
  void whenAWriteCommits_thenTheSubscriberGetsItsEvent_onTheClientsExecutor() throws Exception {
    CommunityApi b = CommunityApi.builder(env("COMMUNITY_API_URL"), env("COMMUNITY_API_KEY_B")).build();
    try {
      List<Event> events = new CopyOnWriteArrayList<>();
      List<String> threads = new CopyOnWriteArrayList<>();
      EventSubscription subscription = b.subscribe(List.of("reward_log.created"), event -> {
        events.add(event);
        threads.add(Thread.currentThread().getName());
      });
      // The stream's first frame is its position: from then on, a write is ours to see.
      waitFor("the stream's position", () -> subscription.lastEventId() != null);
      int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
      RewardLog log = b.blocking().createRewardLog(NewRewardLog.now(1, rewardId)).value();
      waitFor("the event", () -> events.stream().anyMatch(e -> e.as(RewardLog.class).rewardId() == rewardId));
      Event event = events.stream().filter(e -> e.as(RewardLog.class).rewardId() == rewardId).findFirst().orElseThrow();
      assertEquals("reward_log.created", event.type());
      assertEquals(log, event.as(RewardLog.class));
      assertTrue(!event.timestamp().isAfter(java.time.Instant.now()), event.timestamp().toString());
      waitFor("the resume point to pass the event", () -> event.id().equals(subscription.lastEventId()));
      assertTrue(threads.stream().allMatch(t -> t.startsWith("community-api")), threads.toString());
      b.close();
      assertTrue(subscription.isClosed());
    } finally {
      b.close();
    }
  }

  /** The plugin author's case: the service down at onEnable, no saved id; a reward recorded before the stream could connect. */
  @Test
  void whenTheServiceCannotBeReachedAtSubscribe_thenAnEventWrittenBeforeTheStreamConnectsStillComes() throws Exception {
    int port = TcpProxy.freePort();
    java.net.URI live = java.net.URI.create(env("COMMUNITY_API_URL"));
    CommunityApi b = CommunityApi.builder(env("COMMUNITY_API_URL"), env("COMMUNITY_API_KEY_B")).build();
    CommunityApi unreachable = CommunityApi.builder("http://127.0.0.1:" + port + live.getPath(), env("COMMUNITY_API_KEY_B")).build();
    try {
      List<Integer> received = new CopyOnWriteArrayList<>();
      CountDownLatch connected = new CountDownLatch(1);
      unreachable.subscribe(List.of("reward_log.created"), new EventListener() {
        @Override
        public void onEvent(Event event) {
          received.add(event.as(RewardLog.class).rewardId());
        }

        @Override
        public void onConnected() {
          connected.countDown();
        }
      });
      int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
      b.blocking().createRewardLog(NewRewardLog.now(1, rewardId));
      assertEquals(1, connected.getCount(), "the stream connected before the service was reachable");
      TcpProxy reachable = new TcpProxy(port, live);
      try {
        assertTrue(connected.await(40, TimeUnit.SECONDS), "the stream never connected");
        waitFor("the reward recorded before the stream connected", () -> received.contains(rewardId));
      } finally {
        unreachable.close();
        reachable.close();
      }
    } finally {
      unreachable.close();
      b.close();
    }
  }

  /** The plugin author's case: onDisable saves lastEventId() while the listener is still handling an event. */
  @Test
  void whenThePluginStopsWhileItsListenerHandlesAnEvent_thenResumingFromTheSavedIdDeliversThatEventAgain() throws Exception {
    CommunityApi b = CommunityApi.builder(env("COMMUNITY_API_URL"), env("COMMUNITY_API_KEY_B")).build();
    try {
      int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
      CountDownLatch handling = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      EventSubscription first = b.subscribe(List.of("reward_log.created"), event -> {
        if (event.as(RewardLog.class).rewardId() != rewardId) return;
        handling.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      waitFor("the stream's position", () -> first.lastEventId() != null);
      b.blocking().createRewardLog(NewRewardLog.now(1, rewardId));
      assertTrue(handling.await(10, TimeUnit.SECONDS), "the event never came");
      String saved = first.lastEventId(); // onDisable
      first.close();
      release.countDown();
      List<Integer> resumed = new CopyOnWriteArrayList<>();
      b.subscribe(List.of("reward_log.created"), saved, event -> resumed.add(event.as(RewardLog.class).rewardId()));
      waitFor("the event being handled at disable", () -> resumed.contains(rewardId));
    } finally {
      b.close();
    }
  }

  @Test
  void whenACallerAsksForATypeItMayNotSee_thenTheSubscriptionStopsWithThe403() throws Exception {
    try (CommunityApi c = CommunityApi.builder(env("COMMUNITY_API_URL"), env("COMMUNITY_API_KEY_C")).build()) {
      CompletableFuture<ApiException> stopped = new CompletableFuture<>();
      EventSubscription subscription = c.subscribe(List.of("reward_log.created"), new EventListener() {
        @Override
        public void onEvent(Event event) {}

        @Override
        public void onStopped(ApiException reason) {
          stopped.complete(reason);
        }
      });
      ApiException reason = stopped.get(10, TimeUnit.SECONDS);
      assertEquals(403, reason.status());
      assertTrue(reason.getMessage().startsWith("types: this API user may not subscribe to reward_log.created"), reason.getMessage());
      waitFor("the subscription to close", subscription::isClosed);
    }
  }
}
