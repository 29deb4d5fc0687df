package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The leaderboard calls against the live service and the seed (seed.json): Steve and Alex tie on 4 kills, Notch has 1. */
@EnabledIfEnvironmentVariable(named = "COMMUNITY_API_URL", matches = ".+", disabledReason = "needs live servers: node clients/java/test-live.mjs")
class LeaderboardLiveTest {
  private static final Board KILLS = Board.allTime(Statistic.KILL);
  private static CommunityApi a;
  private static CommunityApi c;
  private static CommunityApi d;

  @BeforeAll
  static void connect() {
    a = CommunityApi.builder(System.getenv("COMMUNITY_API_URL"), System.getenv("COMMUNITY_API_KEY_A")).build();
    c = CommunityApi.builder(System.getenv("COMMUNITY_API_URL"), System.getenv("COMMUNITY_API_KEY_C")).build();
    d = CommunityApi.builder(System.getenv("COMMUNITY_API_URL"), System.getenv("COMMUNITY_API_KEY_D")).build();
  }

  @AfterAll
  static void close() {
    for (CommunityApi api : List.of(a, c, d)) api.close();
  }

  @Test
  void whenGroupAReadsTheAllTimeKills_thenTiesShareRank1_orderedByPlayerId_withPseudos() {
    Leaderboard board = a.blocking().getLeaderboard(KILLS, 10);
    assertEquals(Statistic.KILL, board.stat());
    assertEquals(null, board.period());
    assertEquals(List.of(new LeaderboardEntry(1, 1, "Steve", 4), new LeaderboardEntry(1, 2, "Alex", 4), new LeaderboardEntry(3, 3, "Notch", 1)),
        board.entries());
  }

  @Test
  void whenGroupDAsksForARankAndTheNeighbours_thenItGetsThePlayersPlace_andKOnEachSide() {
    assertEquals(new LeaderboardEntry(3, 3, "Notch", 1), d.blocking().getLeaderboardRank(KILLS, 3).entry());
    assertEquals(List.of(1, 2, 3), d.blocking().getLeaderboardAround(Board.allTime(Statistic.COIN), 2, 1).entries().stream()
        .map(LeaderboardEntry::playerId).toList());
  }

  @Test
  void whenTheCurrentWeekIsRead_thenItsPeriodSaysWhichWeek_notEnded() {
    LeaderboardPeriod week = a.blocking().getLeaderboard(Board.current(Statistic.KILL, PeriodKind.WEEK), 10).period();
    assertEquals(PeriodKind.WEEK, week.kind());
    assertTrue(week.key().matches("\\d{4}-W\\d{2}"), week.key());
    assertFalse(week.ended());
    assertTrue(week.startsAt().isBefore(week.endsAt()));
  }

  @Test
  void whenAHologramPollsAnUnchangedBoard_thenTheSecondPollDeliversNothing() {
    LeaderboardPoller hologram = a.leaderboardPoller(KILLS, 3);
    Optional<Leaderboard> first = CommunityApi.Blocking.await(hologram.poll());
    assertEquals(3, first.orElseThrow().entries().size());
    assertEquals(Optional.empty(), CommunityApi.Blocking.await(hologram.poll()));
  }

  @Test
  void whenTheServiceRefuses_thenEachRefusalIsItsKind_withTheServicesMessage() {
    ApiException absent = assertThrows(ApiException.class, () -> a.blocking().getLeaderboardRank(KILLS, 999));
    assertEquals(ApiException.Kind.NOT_FOUND, absent.kind());
    assertEquals("Player 999 has no kill on this board", absent.getMessage());
    ApiException season = assertThrows(ApiException.class, () -> a.blocking().getLeaderboard(Board.season(Statistic.KILL, "nope"), 10));
    assertEquals(ApiException.Kind.BAD_REQUEST, season.kind());
    assertTrue(season.getMessage().startsWith("season: no season 'nope'"), season.getMessage());
    assertEquals(ApiException.Kind.FORBIDDEN, assertThrows(ApiException.class, () -> c.blocking().getLeaderboard(KILLS, 10)).kind());
  }
}
