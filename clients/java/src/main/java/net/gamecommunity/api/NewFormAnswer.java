package net.gamecommunity.api;

import java.util.Objects;

/**
 * The body of create-form. Build it with {@link #of}, then {@link #withStages} and {@link #withComment}
 * for the optional fields (stages default to null, the comment to an empty text).
 */
public record NewFormAnswer(
    int playerId,
    String video,
    String question1,
    String question2,
    String question3,
    String question4,
    String question5,
    Boolean stage1,
    Boolean stage2,
    Boolean stage3,
    String comment) {

  public NewFormAnswer {
    Objects.requireNonNull(video, "video");
    Objects.requireNonNull(question1, "question1");
    Objects.requireNonNull(question2, "question2");
    Objects.requireNonNull(question3, "question3");
    Objects.requireNonNull(question4, "question4");
    Objects.requireNonNull(question5, "question5");
  }

  public static NewFormAnswer of(int playerId, String video, String q1, String q2, String q3, String q4, String q5) {
    return new NewFormAnswer(playerId, video, q1, q2, q3, q4, q5, null, null, null, null);
  }

  /** Each stage: true, false, or null for undecided. */
  public NewFormAnswer withStages(Boolean stage1, Boolean stage2, Boolean stage3) {
    return new NewFormAnswer(playerId, video, question1, question2, question3, question4, question5, stage1, stage2, stage3, comment);
  }

  public NewFormAnswer withComment(String comment) {
    return new NewFormAnswer(playerId, video, question1, question2, question3, question4, question5, stage1, stage2, stage3,
        Objects.requireNonNull(comment, "comment"));
  }
}
