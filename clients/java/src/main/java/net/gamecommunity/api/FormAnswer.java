package net.gamecommunity.api;

/**
 * A recorded form answer (a player's application); {@code stage1..3} are null until decided.
 *
 * @param id the answer's id
 * @param playerId the id of the player who answered
 * @param video a link to the player's video
 * @param question1 the answer to question 1
 * @param question2 the answer to question 2
 * @param question3 the answer to question 3
 * @param question4 the answer to question 4
 * @param question5 the answer to question 5
 * @param stage1 whether stage 1 was passed; null until decided
 * @param stage2 whether stage 2 was passed; null until decided
 * @param stage3 whether stage 3 was passed; null until decided
 * @param comment a comment (empty when none was given)
 */
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
