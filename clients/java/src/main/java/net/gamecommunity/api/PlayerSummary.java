package net.gamecommunity.api;

/** A player as get-all-players and get-player-by-nick return it (without the sensitive fields of {@link FullPlayer}). */
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
