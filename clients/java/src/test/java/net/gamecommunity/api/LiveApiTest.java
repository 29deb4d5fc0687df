package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.function.Executable;

/**
 * Every route and every error kind against live servers on PostgreSQL, started by test-live.mjs with
 * the data of seed.json; the expected records are decoded from that same file.
 */
@EnabledIfEnvironmentVariable(named = "COMMUNITY_API_URL", matches = ".+", disabledReason = "needs live servers: node clients/java/test-live.mjs")
class LiveApiTest {
  private static final String URL = env("COMMUNITY_API_URL");
  private static CommunityApi a;
  private static CommunityApi b;
  private static CommunityApi c;
  private static CommunityApi d;
  private static JsonObject seed;

  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) throw new IllegalStateException(name + " is not set: run the tests with clients/java/test-live.mjs");
    return value;
  }

  private static CommunityApi client(String url, String key, RetryPolicy policy) {
    return CommunityApi.builder(url, key).userAgent("java-client-tests").retryPolicy(policy).build();
  }

  @BeforeAll
  static void connect() throws IOException {
    a = client(URL, env("COMMUNITY_API_KEY_A"), RetryPolicy.DEFAULT);
    b = client(URL, env("COMMUNITY_API_KEY_B"), RetryPolicy.DEFAULT);
    c = client(URL, env("COMMUNITY_API_KEY_C"), RetryPolicy.DEFAULT);
    d = client(URL, env("COMMUNITY_API_KEY_D"), RetryPolicy.DEFAULT);
    try (InputStream in = LiveApiTest.class.getResourceAsStream("/seed.json")) {
      seed = StrictJson.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getAsJsonObject();
    }
  }

  @AfterAll
  static void close() {
    for (CommunityApi api : List.of(a, b, c, d)) api.close();
  }

  @SuppressWarnings("unchecked")
  private static <T> List<T> seeded(String array, Class<T> element) {
    return (List<T>) StrictJson.read(seed.get(array), Route.listOf(element), array);
  }

  private static ApiException failure(ApiException.Kind kind, Executable call) {
    ApiException e = assertThrows(ApiException.class, call);
    assertEquals(kind, e.kind(), e.toString());
    assertTrue(e.requestId().isPresent(), "no X-Request-Id");
    return e;
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  // ---- every route

  @Test
  void whenGroupAListsTheFullPlayersOfGrade2_thenItGetsExactlyTheSeededOnes_tokenIncluded() {
    List<FullPlayer> expected = seeded("players", FullPlayer.class).stream().filter(p -> p.gradeId() == 2).toList();
    assertEquals(expected, a.blocking().getAllFullPlayersByGradeId(2));
  }

  @Test
  void whenGroupCListsAllPlayers_thenEachIsTheSummaryOfItsSeededRecord() {
    List<PlayerSummary> players = c.getAllPlayers().join();
    for (FullPlayer full : seeded("players", FullPlayer.class)) {
      PlayerSummary summary = players.stream().filter(p -> p.id() == full.id()).findFirst().orElseThrow();
      assertEquals(full.pseudo(), summary.pseudo());
      assertEquals(full.nickname(), summary.nickname());
      assertEquals(full.chatId(), summary.chatId());
      assertEquals(full.language(), summary.language());
    }
  }

  @Test
  void whenGroupDLooksUpANicknameInAnotherCase_thenItGetsThatPlayer() {
    PlayerSummary steve = d.blocking().getPlayerByNick("stevie");
    assertEquals("Steve", steve.pseudo());
    assertEquals(120, steve.credit());
    assertNull(d.blocking().getPlayerByNick("Alex").nickname());
  }

  @Test
  void whenGroupCReadsACosmetic_thenItIsTheSeededRecord_withItsETag() {
    Cosmetic halo = seeded("cosmetics", Cosmetic.class).get(0);
    Tagged<Cosmetic> read = c.blocking().getCosmeticTagged(halo.id());
    assertEquals(halo, read.value());
    assertTrue(read.etag().matches("\"cosmetic-1-v\\d+\""), read.etag());
  }

  @Test
  void whenGroupBUpdatesSomeFieldsOfACosmetic_thenThoseChange_aClearedOneIsNull_andTheOthersStay() {
    Cosmetic before = b.blocking().getCosmetic(2);
    Tagged<Cosmetic> after = b.blocking().updateCosmetic(CosmeticUpdate.of(2).price(before.price() + 1).argumentEn("Big wings").clearDescription().build());
    assertEquals(before.price() + 1, after.value().price());
    assertEquals("Big wings", after.value().argumentEn());
    assertNull(after.value().description());
    assertEquals(before.collection(), after.value().collection());
    assertEquals(before.render(), after.value().render());
    assertEquals(after.value(), b.blocking().getCosmetic(2));
  }

  @Test
  void whenGroupDRecordsAFormAnswer_thenItComesBackWithItsIdAndDefaults() {
    Created<FormAnswer> created = d.createForm(NewFormAnswer.of(2, "https://video.example/alex", "Alex", "17", "Builder", "Evenings", "Redstone")).join();
    assertFalse(created.replayed());
    assertTrue(created.value().id() > 0);
    assertEquals("Redstone", created.value().question5());
    assertNull(created.value().stage1());
    assertEquals("", created.value().comment());

    FormAnswer judged = d.blocking().createForm(NewFormAnswer.of(2, "https://video.example/alex2", "", "", "", "", "")
        .withStages(true, false, null).withComment("seen")).value();
    assertEquals(Boolean.TRUE, judged.stage1());
    assertEquals(Boolean.FALSE, judged.stage2());
    assertNull(judged.stage3());
    assertEquals("seen", judged.comment());
  }

  @Test
  void whenGroupAListsInfectedStats_thenTheyAreTheSeededOnes() {
    assertEquals(seeded("infectedStats", InfectedStats.class), a.blocking().getAllInfectedStats());
  }

  @Test
  void whenGroupBListsActiveItems_thenTheCurrentOneIsThere_andTheExpiredOneIsNot() {
    List<TemporaryItem> items = b.blocking().getActiveItems();
    List<TemporaryItem> seededItems = seeded("temporaryItems", TemporaryItem.class);
    assertTrue(items.contains(seededItems.get(0)), items.toString());
    assertFalse(items.stream().anyMatch(i -> i.id().equals(seededItems.get(1).id())));
  }

  @Test
  void whenGroupARecordsARewardAtAMoment_thenItIsStoredToTheSecond() {
    int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
    Instant at = Instant.parse("2026-11-22T09:15:30.250Z");
    RewardLog log = a.blocking().createRewardLog(NewRewardLog.at(1, rewardId, at)).value();
    assertEquals(new RewardLog(log.id(), 1, rewardId, Instant.parse("2026-11-22T09:15:30Z")), log);
  }

  @Test
  void whenOneRewardIsGivenTwiceInASecondWithoutAMoment_thenBothAreRecorded_asADoubleKillIs() {
    int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
    // Two at once, until both land in one second (the second may turn between them).
    for (int attempt = 0; ; attempt++) {
      CompletableFuture<Created<RewardLog>> one = a.createRewardLog(NewRewardLog.now(1, rewardId));
      CompletableFuture<Created<RewardLog>> two = a.createRewardLog(NewRewardLog.now(1, rewardId));
      RewardLog first = CommunityApi.Blocking.await(one).value();
      RewardLog second = CommunityApi.Blocking.await(two).value();
      assertNotEquals(first.id(), second.id());
      if (first.rewardedAt().equals(second.rewardedAt())) break;
      assertTrue(attempt < 5, "no two requests in one second in 5 tries");
    }
  }

  @Test
  void whenAPostIsSentAgainWithItsIdempotencyKey_thenTheServiceReplaysTheFirstAnswer_andRecordsOnce() {
    int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
    String key = UUID.randomUUID().toString();
    Created<RewardLog> first = a.blocking().createRewardLog(NewRewardLog.now(1, rewardId), key);
    Created<RewardLog> again = a.blocking().createRewardLog(NewRewardLog.now(1, rewardId), key);
    assertFalse(first.replayed());
    assertTrue(again.replayed());
    assertEquals(first.value(), again.value());
    assertEquals(key, again.idempotencyKey());
  }

  @Test
  void whenGroupBRegistersAUser_thenItGetsItsKey_whichWorksButIsInNoGroup() {
    RegisteredUser user = b.blocking().register(NewApiUser.named(unique("bot")).withRole("BOT")).value();
    assertEquals("BOT", user.role());
    assertTrue(user.apiKey().matches("gsk_[A-Za-z0-9_-]{43}"));
    assertFalse(user.toString().contains(user.apiKey()));
    try (CommunityApi newcomer = client(URL, user.apiKey(), RetryPolicy.NONE)) {
      failure(ApiException.Kind.FORBIDDEN, () -> newcomer.blocking().getAllMaps());
    }
  }

  @Test
  void whenGroupAUpdatesAWorld_thenFlagsAndTimestampsAreTyped_andTagIsClearedThenSet() {
    Instant lastUsed = Instant.parse("2026-11-23T07:00:00Z");
    FreebuildWorld world = a.blocking().updateWorld(WorldUpdate.of(5).state("unLoaded").gamerulePvp(true).lastUsed(lastUsed).tag("spawn").build());
    assertEquals("unLoaded", world.state());
    assertTrue(world.gamerulePvp());
    assertEquals(lastUsed, world.lastUsed());
    assertEquals("spawn", world.tag());
    assertEquals("Flatland", world.name());
    assertNull(a.blocking().updateWorld(WorldUpdate.of(5).clearTag().build()).tag());
  }

  @Test
  void whenGroupCListsTheMaps_thenTheyAreTheSeededOnes() {
    assertEquals(seeded("parkourMaps", ParkourMap.class), c.blocking().getAllMaps());
  }

  // ---- conditional requests

  @Test
  void whenAListIsPolledTwiceUnchanged_thenTheSecondPollIsA304_deliveringNothing() {
    ListPoller<ParkourMap> poller = c.mapsPoller();
    Optional<List<ParkourMap>> first = poller.poll().join();
    assertEquals(Optional.of(seeded("parkourMaps", ParkourMap.class)), first);
    assertTrue(poller.etag().isPresent());
    assertEquals(Optional.empty(), poller.poll().join());
  }

  @Test
  void whenEveryListPollerPollsTwice_thenEachGetsItsListThen304() {
    for (ListPoller<?> poller : List.of(a.allPlayersPoller(), a.infectedStatsPoller(), a.activeItemsPoller(), a.mapsPoller(), a.fullPlayersByGradeIdPoller(1))) {
      assertTrue(poller.poll().join().isPresent());
      assertEquals(Optional.empty(), poller.poll().join());
    }
  }

  @Test
  void whenEachListIsSyncedTwice_thenTheFirstReadsItWhole_theSecondOnlyChanges_andTheCacheEqualsTheList() {
    ListSync<Integer, ParkourMap> maps = c.mapsSync();
    ListSync.Result<ParkourMap> first = maps.sync().join();
    assertTrue(first.full());
    assertEquals(seeded("parkourMaps", ParkourMap.class), first.changed());
    assertTrue(maps.token().startsWith("s2."));
    assertFalse(maps.sync().join().full());
    assertEquals(seeded("parkourMaps", ParkourMap.class), List.copyOf(new java.util.TreeMap<>(maps.rows()).values()));
    for (ListSync<?, ?> sync : List.of(a.allPlayersSync(), a.infectedStatsSync(), a.activeItemsSync(), a.fullPlayersByGradeIdSync(1))) {
      assertTrue(sync.sync().join().full());
      assertFalse(sync.sync().join().full());
    }
    assertEquals(a.blocking().getAllPlayers().size(), a.allPlayersSync().sync().join().changed().size());
  }

  @Test
  void whenACosmeticIsUpdatedWithTheETagItWasReadWith_thenItApplies_andAStaleETagGets412AndWritesNothing() {
    Tagged<Cosmetic> read = b.blocking().getCosmeticTagged(3);
    Tagged<Cosmetic> updated = b.blocking().updateCosmetic(CosmeticUpdate.of(3).price(read.value().price() + 10).ifMatch(read.etag()).build());
    assertNotEquals(read.etag(), updated.etag());
    ApiException stale = failure(ApiException.Kind.PRECONDITION_FAILED,
        () -> b.blocking().updateCosmetic(CosmeticUpdate.of(3).price(1).ifMatch(read.etag()).build()));
    assertEquals(412, stale.status());
    assertEquals(updated.value(), b.blocking().getCosmetic(3));
    assertEquals(updated.etag(), b.blocking().getCosmeticTagged(3).etag());
  }

  // ---- every error kind

  @Test
  void whenAFieldIsInvalid_then400NamesIt() {
    ApiException e = failure(ApiException.Kind.BAD_REQUEST, () -> a.blocking().updateCosmetic(CosmeticUpdate.of(4).price(-1).build()));
    assertEquals(400, e.status());
    assertTrue(e.getMessage().startsWith("price:"), e.getMessage());
  }

  @Test
  void whenTheKeyIsUnknown_then401() {
    try (CommunityApi stranger = client(URL, "gsk_" + "A".repeat(43), RetryPolicy.NONE)) {
      ApiException e = failure(ApiException.Kind.UNAUTHENTICATED, () -> stranger.blocking().getAllMaps());
      assertEquals(401, e.status());
    }
  }

  @Test
  void whenGroupCCallsARouteOnlyAAndBMay_then403() {
    failure(ApiException.Kind.FORBIDDEN, () -> c.blocking().updateWorld(WorldUpdate.of(4).state("loaded").build()));
    failure(ApiException.Kind.FORBIDDEN, () -> d.blocking().register(NewApiUser.named(unique("nope"))));
  }

  @Test
  void whenTheRecordDoesNotExist_then404WithAShortMessage() {
    assertEquals("Cosmetic not found", failure(ApiException.Kind.NOT_FOUND, () -> c.blocking().getCosmetic(999_999)).getMessage());
    failure(ApiException.Kind.NOT_FOUND, () -> CommunityApi.Blocking.await(d.getPlayerByNick(unique("nobody"))));
    assertEquals(Optional.empty(), d.blocking().findPlayerByNick(unique("nobody")));
    assertEquals("Steve", d.blocking().findPlayerByNick("steve").orElseThrow().pseudo());
    // The join path: "stevie" is Steve's nickname, nobody's pseudo.
    assertEquals("Steve", d.blocking().findPlayerByNick("stevie").orElseThrow().pseudo());
    assertEquals(Optional.empty(), d.blocking().findPlayerByPseudo("stevie"));
    assertEquals("Steve", d.blocking().getPlayerByPseudo("STEVE").pseudo());
    failure(ApiException.Kind.NOT_FOUND, () -> a.blocking().updateWorld(WorldUpdate.of(999_999).state("x").build()));
  }

  @Test
  void whenAUsernameIsTakenInAnotherCase_then409NamesIt_asADuplicate() {
    ApiException e = failure(ApiException.Kind.CONFLICT, () -> a.blocking().register(NewApiUser.named("USER-c")));
    assertTrue(e.getMessage().contains("'USER-c'"), e.getMessage());
    assertEquals(Optional.of("DUPLICATE"), e.error());
  }

  @Test
  void whenARewardIsRecordedTwice_orForAPlayerThatDoesNotExist_thenBothAre409_toldApartByTheirErrorName() {
    int rewardId = ThreadLocalRandom.current().nextInt(1_000_000, Integer.MAX_VALUE);
    Instant at = Instant.parse("2026-11-22T10:00:00Z");
    a.blocking().createRewardLog(NewRewardLog.at(1, rewardId, at));
    ApiException duplicate = failure(ApiException.Kind.CONFLICT, () -> a.blocking().createRewardLog(NewRewardLog.at(1, rewardId, at)));
    assertEquals(Optional.of("DUPLICATE"), duplicate.error());
    assertEquals(ErrorName.DUPLICATE, duplicate.errorName());
    ApiException noPlayer = failure(ApiException.Kind.CONFLICT, () -> a.blocking().createRewardLog(NewRewardLog.now(999_999, rewardId)));
    assertEquals(Optional.of("REFERENCE_NOT_FOUND"), noPlayer.error());
  }

  @Test
  void whenACallIsAnswered_thenTheClientKnowsTheRateBudgetLeft() {
    try (CommunityApi limited = client(env("COMMUNITY_API_RATE_LIMITED_URL"), env("COMMUNITY_API_KEY_B"), RetryPolicy.NONE)) {
      limited.getAllMaps().handle((ok, failure) -> null).join();
      RateLimit budget = limited.rateLimit().orElseThrow();
      assertEquals(Integer.parseInt(env("COMMUNITY_API_RATE_LIMIT")), budget.limit());
      assertTrue(budget.remaining() >= 0 && budget.remaining() < budget.limit(), budget.toString());
    }
  }

  @Test
  void whenTheUserHasSpentItsRequestsForTheMinute_then429WithRetryAfter() {
    int limit = Integer.parseInt(env("COMMUNITY_API_RATE_LIMIT"));
    try (CommunityApi limited = client(env("COMMUNITY_API_RATE_LIMITED_URL"), env("COMMUNITY_API_KEY_LIMITED"), RetryPolicy.NONE)) {
      // Windows are fixed minutes: within 2 × limit + 1 requests at most one boundary passes, so one is refused.
      ApiException refused = null;
      for (int i = 0; i <= 2 * limit && refused == null; i++) {
        try {
          limited.blocking().getAllMaps();
        } catch (ApiException e) {
          refused = e;
        }
      }
      assertTrue(refused != null, "no 429 after " + (2 * limit + 1) + " requests");
      assertEquals(ApiException.Kind.RATE_LIMITED, refused.kind(), refused.toString());
      Duration wait = refused.retryAfter().orElseThrow();
      assertTrue(!wait.isNegative() && wait.compareTo(Duration.ofSeconds(60)) <= 0, wait.toString());
      assertEquals(Optional.of("RATE_LIMITED"), refused.error());
      assertEquals(0, limited.rateLimit().orElseThrow().remaining());
    }
  }

  @Test
  void whenTheServiceCannotReachItsDatabase_then503AfterTheBoundedRetries() {
    RetryPolicy twice = new RetryPolicy(2, Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofSeconds(1));
    try (CommunityApi cut = client(env("COMMUNITY_API_UNAVAILABLE_URL"), env("COMMUNITY_API_KEY_A"), twice)) {
      ApiException e = failure(ApiException.Kind.UNAVAILABLE, () -> cut.blocking().getPlayerByNick("Steve"));
      assertEquals(503, e.status());
    }
  }
}
