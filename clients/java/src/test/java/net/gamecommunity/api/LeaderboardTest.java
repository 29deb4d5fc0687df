package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import net.gamecommunity.api.ScriptedServer.Reply;
import org.junit.jupiter.api.Test;

/** The leaderboard calls against a scripted server: what they send, how they decode, what they refuse unsent. */
class LeaderboardTest {
  private static final String WEEK = "{\"kind\":\"week\",\"key\":\"2026-W49\",\"startsAt\":\"2026-11-30T00:00:00.000Z\","
      + "\"endsAt\":\"2026-12-07T00:00:00.000Z\",\"countedFrom\":\"2026-11-30T00:00:00.000Z\",\"ended\":false}";
  private static final String STEVE = "{\"rank\":1,\"playerId\":1,\"pseudo\":\"Steve\",\"value\":151}";
  private static final String HEROBRINE = "{\"rank\":1,\"playerId\":4,\"pseudo\":\"Herobrine\",\"value\":151}";
  private static final String ZOE = "{\"rank\":3,\"playerId\":5,\"pseudo\":\"Zoe\",\"value\":37}";

  private static CommunityApi client(ScriptedServer server) {
    return CommunityApi.builder(server.baseUrl(), "gsk_test").retryPolicy(RetryPolicy.NONE).build();
  }

  @Test
  void whenTheWeeksTopIsAskedFor_thenTheQueryNamesTheBoard_andTheAnswerIsTyped_tiesSharingARank() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      server.script.add(Reply.of(200, "{\"stat\":\"eligibleGame\",\"period\":" + WEEK + ",\"entries\":[" + STEVE + "," + HEROBRINE + "," + ZOE + "]}", Map.of()));
      Leaderboard board = api.blocking().getLeaderboard(Board.current(Statistic.ELIGIBLE_GAME, PeriodKind.WEEK), 3);
      assertEquals("/api/infecte2/get-leaderboard?stat=eligibleGame&period=week&limit=3", server.received.get(0).get("uri"));
      assertEquals(Statistic.ELIGIBLE_GAME, board.stat());
      assertEquals(new LeaderboardPeriod(PeriodKind.WEEK, "2026-W49", Instant.parse("2026-11-30T00:00:00Z"), Instant.parse("2026-12-07T00:00:00Z"),
          Instant.parse("2026-11-30T00:00:00Z"), false), board.period());
      assertEquals(List.of(1, 1, 3), board.entries().stream().map(LeaderboardEntry::rank).toList());
      assertEquals(new LeaderboardEntry(3, 5, "Zoe", 37), board.entries().get(2));
    }
  }

  @Test
  void whenARankOrTheNeighboursAreAskedFor_thenPastPeriodsAndSeasonsAreNamedInTheQuery() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      server.script.add(Reply.of(200, "{\"stat\":\"kill\",\"period\":null,\"entry\":" + ZOE + "}", Map.of()));
      server.script.add(Reply.of(200, "{\"stat\":\"coin\",\"period\":" + WEEK.replace("week", "month").replace("2026-W49", "2026-11") + ",\"entries\":[" + ZOE + "]}", Map.of()));
      server.script.add(Reply.of(200, "{\"stat\":\"winH\",\"period\":{\"kind\":\"season\",\"key\":\"winter 2026\",\"startsAt\":\"2026-12-01T00:00:00.000Z\","
          + "\"endsAt\":null,\"countedFrom\":\"2026-12-01T00:00:00.000Z\",\"ended\":false},\"entries\":[]}", Map.of()));
      LeaderboardRank rank = api.blocking().getLeaderboardRank(Board.allTime(Statistic.KILL), 5);
      assertEquals(new LeaderboardRank(Statistic.KILL, null, new LeaderboardEntry(3, 5, "Zoe", 37)), rank);
      assertEquals(PeriodKind.MONTH, api.blocking().getLeaderboardAround(Board.past(Statistic.COIN, PeriodKind.MONTH, "2026-11"), 5, 2).period().kind());
      Leaderboard season = api.blocking().getLeaderboard(Board.season(Statistic.WIN_H, "winter 2026"), 10);
      assertNull(season.period().endsAt());
      assertEquals(List.of(
          "/api/infecte2/get-leaderboard-rank?stat=kill&period=all&playerId=5",
          "/api/infecte2/get-leaderboard-around?stat=coin&period=month&key=2026-11&playerId=5&k=2",
          "/api/infecte2/get-leaderboard?stat=winH&period=season&season=winter%202026&limit=10"),
          server.received.stream().map(r -> r.get("uri")).toList());
    }
  }

  @Test
  void whenALimitOrKIsOutOfRange_orTheBoardIsNull_thenTheFutureFailsWithInvalidArgument_andNothingIsSent() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      Board kills = Board.allTime(Statistic.KILL);
      assertEquals("limit: expected 1 to 100, got 0", invalid(() -> api.blocking().getLeaderboard(kills, 0)));
      assertEquals("limit: expected 1 to 100, got 101", invalid(() -> api.blocking().getLeaderboard(kills, 101)));
      assertEquals("k: expected 0 to 50, got -1", invalid(() -> api.blocking().getLeaderboardAround(kills, 1, -1)));
      assertEquals("board: null where a value is required", invalid(() -> api.blocking().getLeaderboardRank(null, 1)));
      assertThrows(IllegalArgumentException.class, () -> api.leaderboardPoller(kills, 0));
      assertTrue(server.received.isEmpty());
    }
    IllegalArgumentException season = assertThrows(IllegalArgumentException.class, () -> Board.current(Statistic.KILL, PeriodKind.SEASON));
    assertEquals("kind: a season has a name, use Board.season(stat, name)", season.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Board.season(Statistic.KILL, " "));
    assertThrows(NullPointerException.class, () -> Board.allTime(null));
    assertEquals("Board[stat=kill, period=week, key=2026-W48]", Board.past(Statistic.KILL, PeriodKind.WEEK, "2026-W48").toString());
    assertEquals(Board.current(Statistic.COIN, PeriodKind.DAY), Board.current(Statistic.COIN, PeriodKind.DAY));
  }

  private static String invalid(org.junit.jupiter.api.function.Executable call) {
    ApiException e = assertThrows(ApiException.class, call);
    assertEquals(ApiException.Kind.INVALID_ARGUMENT, e.kind());
    return e.getMessage();
  }

  @Test
  void whenTheAnswerNamesAStatisticThisClientDoesNotKnow_thenItIsAnInvalidResponse_namingTheField() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      server.script.add(Reply.of(200, "{\"stat\":\"headshot\",\"period\":null,\"entries\":[]}", Map.of()));
      ApiException e = assertThrows(ApiException.class, () -> api.blocking().getLeaderboard(Board.allTime(Statistic.KILL), 10));
      assertEquals(ApiException.Kind.INVALID_RESPONSE, e.kind());
      assertTrue(e.getMessage().contains("$.stat: expected one of kill, assist, death"), e.getMessage());
    }
  }

  @Test
  void whenAHologramsPollerRuns_thenOnlyAChangedBoardIsDelivered_withTheLastETagSentBack() throws Exception {
    try (ScriptedServer server = new ScriptedServer(); CommunityApi api = client(server)) {
      String first = "{\"stat\":\"kill\",\"period\":" + WEEK + ",\"entries\":[" + STEVE + "]}";
      String second = "{\"stat\":\"kill\",\"period\":" + WEEK + ",\"entries\":[" + STEVE + "," + ZOE + "]}";
      server.script.add(Reply.of(200, first, Map.of("ETag", "\"lb-1\"")));
      server.script.add(Reply.of(304, "", Map.of("ETag", "\"lb-1\"")));
      server.script.add(Reply.of(304, "", Map.of("ETag", "\"lb-1\"")));
      server.script.add(Reply.of(200, second, Map.of("ETag", "\"lb-2\"")));
      List<Leaderboard> drawn = new CopyOnWriteArrayList<>();
      LeaderboardPoller poller = api.leaderboardPoller(Board.current(Statistic.KILL, PeriodKind.WEEK), 10);
      ListPoller.Subscription loop = poller.start(Duration.ofMillis(5), drawn::add, e -> {});
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (drawn.size() < 2 && System.nanoTime() < deadline) Thread.sleep(5);
      loop.close();
      assertEquals(List.of(1, 2), drawn.stream().map(b -> b.entries().size()).toList());
      assertEquals(List.of("null", "\"lb-1\"", "\"lb-1\"", "\"lb-1\""), server.received.stream().map(r -> r.get("ifNoneMatch")).limit(4).toList());
      assertEquals("/api/infecte2/get-leaderboard?stat=kill&period=week&limit=10", server.received.get(0).get("uri"));
      assertEquals("\"lb-2\"", poller.etag().orElseThrow());
    }
  }
}
