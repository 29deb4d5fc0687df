package net.gamecommunity.api;

/** A recorded form answer; {@code stage1..3} are null until decided. */
public record FormAnswer(
    int id,
    int playerId,
    String video,
    String question1,
    String question2,
    String question3,
    String question4,
    String question5,
    @Nullable Boolean stage1,
    @Nullable Boolean stage2,
    @Nullable Boolean stage3,
    String comment) {}
