package net.gamecommunity.api;

/**
 * A player as get-all-players and get-player-by-nick return it (without the sensitive fields of {@link FullPlayer}).
 *
 * @param id the player's id in the community database (not the Minecraft UUID)
 * @param pseudo the player's name (pseudo), unique regardless of case
 * @param credit the player's credits, the community's currency
 * @param gradeId the id of the player's grade (rank)
 * @param modStatus whether the player is in moderator mode now
 * @param staff whether the player belongs to a staff
 * @param alert whether the player wants to see staff-only messages
 * @param nickname a nickname shown instead of the pseudo, unique regardless of case; null when none
 * @param status the connection status, a free text the game sets (seen: {@code Online}, {@code Offline}, {@code Away})
 * @param chatId the id of the player's linked chat account; null when none is linked
 * @param language the player's language, a free text code (seen: {@code FR}, {@code EN})
 * @param streamerPoint streaming points earned by the player
 * @param tag a custom grade label shown with the name; null when none
 * @param color a custom colour for the name (such as {@code #5555ff}); null when none
 * @param highclub whether the player has the highclub, the community's paid membership
 * @param vote vote points: votes for the server on listing sites
 */
public record PlayerSummary(
    int id,
    String pseudo,
    int credit,
    int gradeId,
    boolean modStatus,
    boolean staff,
    boolean alert,
    @Nullable String nickname,
    String status,
    @Nullable String chatId,
    String language,
    int streamerPoint,
    @Nullable String tag,
    @Nullable String color,
    boolean highclub,
    int vote) {}
