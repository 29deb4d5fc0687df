package net.gamecommunity.api;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.List;

/** The API's routes: method, path under the base URL, and what a success answer holds. */
enum Route {
  FULL_PLAYERS_BY_GRADE("GET", "/player/get-all-full-players-by-gradeId", listOf(FullPlayer.class)),
  UPDATE_COSMETIC("PATCH", "/cosmetic/update-cosmetic", Cosmetic.class),
  ALL_PLAYERS("GET", "/player/get-all-players", listOf(PlayerSummary.class)),
  CREATE_FORM("POST", "/form/create-form", FormAnswer.class),
  ALL_INFECTED_STATS("GET", "/infecte2/get-all-infectes", listOf(InfectedStats.class)),
  ACTIVE_ITEMS("GET", "/temporary-item/get-active-items", listOf(TemporaryItem.class)),
  CREATE_REWARD_LOG("POST", "/website/create-reward-log", RewardLog.class),
  INSCRIPTION("POST", "/inscription", RegisteredUser.class),
  PLAYER_BY_NICK("GET", "/player/get-player-by-nick", PlayerSummary.class),
  UPDATE_WORLD("PATCH", "/freebuild/update-world", FreebuildWorld.class),
  ALL_MAPS("GET", "/parkour/get-all-maps", listOf(ParkourMap.class)),
  GET_COSMETIC("GET", "/cosmetic/get-cosmetic", Cosmetic.class),
  LEADERBOARD("GET", "/infecte2/get-leaderboard", Leaderboard.class),
  LEADERBOARD_RANK("GET", "/infecte2/get-leaderboard-rank", LeaderboardRank.class),
  LEADERBOARD_AROUND("GET", "/infecte2/get-leaderboard-around", Leaderboard.class);

  final String method;
  final String path;
  final Type response;

  Route(String method, String path, Type response) {
    this.method = method;
    this.path = path;
    this.response = response;
  }

  static Type listOf(Class<?> element) {
    return new ParameterizedType() {
      @Override
      public Type[] getActualTypeArguments() {
        return new Type[] {element};
      }

      @Override
      public Type getRawType() {
        return List.class;
      }

      @Override
      public Type getOwnerType() {
        return null;
      }
    };
  }
}
