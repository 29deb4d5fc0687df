package net.gamecommunity.api;

import java.time.Instant;

/** A player in full, with its token and IP address: only get-all-full-players-by-gradeId returns it. */
public record FullPlayer(
    int id,
    String pseudo,
    String token,
    int credit,
    int gradeId,
    boolean modStatus,
    boolean staff,
    boolean alert,
    @Nullable String nickname,
    Instant firstConnection,
    double totalTimeConnection,
    String status,
    String ip,
    @Nullable String chatId,
    String language,
    int streamerPoint,
    @Nullable String tag,
    @Nullable String color,
    boolean highclub,
    int vote) {

  @Override
  public String toString() {
    return "FullPlayer[id=" + id + ", pseudo=" + pseudo + ", token and ip hidden]";
  }
}
