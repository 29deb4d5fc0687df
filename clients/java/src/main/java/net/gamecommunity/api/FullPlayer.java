package net.gamecommunity.api;

import java.time.Instant;

/**
 * A player in full, with its token and IP address: only get-all-full-players-by-gradeId returns it.
 *
 * @param id the player's id in the community database (not the Minecraft UUID)
 * @param pseudo the player's name (pseudo), unique regardless of case
 * @param token the player's token (sensitive: never log it; hidden from {@link #toString()})
 * @param credit the player's credits, the community's currency
 * @param gradeId the id of the player's grade (rank)
 * @param modStatus whether the player is in moderator mode now
 * @param staff whether the player belongs to a staff
 * @param alert whether the player wants to see staff-only messages
 * @param nickname a nickname shown instead of the pseudo, unique regardless of case; null when none
 * @param firstConnection the player's first connection
 * @param totalTimeConnection time spent on the server, in the game plugin's unit (fractional)
 * @param status the connection status, a free text the game sets (seen: {@code Online}, {@code Offline}, {@code Away})
 * @param ip the player's IP address (sensitive: never log it; hidden from {@link #toString()})
 * @param chatId the id of the player's linked chat account; null when none is linked
 * @param language the player's language, a free text code (seen: {@code FR}, {@code EN})
 * @param streamerPoint streaming points earned by the player
 * @param tag a custom grade label shown with the name; null when none
 * @param color a custom colour for the name (such as {@code #5555ff}); null when none
 * @param highclub whether the player has the highclub, the community's paid membership
 * @param vote vote points: votes for the server on listing sites
 */
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
