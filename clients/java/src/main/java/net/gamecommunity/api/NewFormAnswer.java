package net.gamecommunity.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The body of create-form: a player's application. Build it by name with {@link #builder}, which
 * says which answer goes to which question:
 *
 * <pre>{@code
 * NewFormAnswer answer = NewFormAnswer.builder(playerId)
 *     .video("https://example.org/v/42")
 *     .question1("...").question2("...").question3("...").question4("...").question5("...")
 *     .comment("via /apply")
 *     .build();
 * }</pre>
 *
 * @param playerId the id of the answering player
 * @param video a link to the player's video
 * @param question1 the answer to question 1
 * @param question2 the answer to question 2
 * @param question3 the answer to question 3
 * @param question4 the answer to question 4
 * @param question5 the answer to question 5
 * @param stage1 whether stage 1 was passed; null for undecided (the usual value of a new answer)
 * @param stage2 whether stage 2 was passed; null for undecided
 * @param stage3 whether stage 3 was passed; null for undecided
 * @param comment a comment; null for none (recorded as an empty text)
 */
public record NewFormAnswer(
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
    @Nullable String comment) {

  /**
   * Checks that the video and the five answers are given.
   *
   * @param playerId the id of the answering player
   * @param video a link to the player's video
   * @param question1 the answer to question 1
   * @param question2 the answer to question 2
   * @param question3 the answer to question 3
   * @param question4 the answer to question 4
   * @param question5 the answer to question 5
   * @param stage1 whether stage 1 was passed, or null
   * @param stage2 whether stage 2 was passed, or null
   * @param stage3 whether stage 3 was passed, or null
   * @param comment a comment, or null
   */
  public NewFormAnswer {
    Objects.requireNonNull(video, "video");
    Objects.requireNonNull(question1, "question1");
    Objects.requireNonNull(question2, "question2");
    Objects.requireNonNull(question3, "question3");
    Objects.requireNonNull(question4, "question4");
    Objects.requireNonNull(question5, "question5");
  }

  /**
   * The required fields, in order (the {@link #builder} names them).
   *
   * @param playerId the id of the answering player
   * @param video a link to the player's video
   * @param q1 the answer to question 1
   * @param q2 the answer to question 2
   * @param q3 the answer to question 3
   * @param q4 the answer to question 4
   * @param q5 the answer to question 5
   * @return the form answer, stages undecided and no comment
   */
  public static NewFormAnswer of(int playerId, String video, String q1, String q2, String q3, String q4, String q5) {
    return new NewFormAnswer(playerId, video, q1, q2, q3, q4, q5, null, null, null, null);
  }

  /**
   * @param playerId the id of the answering player
   * @return a builder of a form answer for that player
   */
  public static Builder builder(int playerId) {
    return new Builder(playerId);
  }

  /**
   * Each stage: true, false, or null for undecided.
   *
   * @param stage1 whether stage 1 was passed
   * @param stage2 whether stage 2 was passed
   * @param stage3 whether stage 3 was passed
   * @return this answer with those stages
   */
  public NewFormAnswer withStages(Boolean stage1, Boolean stage2, Boolean stage3) {
    return new NewFormAnswer(playerId, video, question1, question2, question3, question4, question5, stage1, stage2, stage3, comment);
  }

  /**
   * @param comment a comment
   * @return this answer with that comment
   */
  public NewFormAnswer withComment(String comment) {
    return new NewFormAnswer(playerId, video, question1, question2, question3, question4, question5, stage1, stage2, stage3,
        Objects.requireNonNull(comment, "comment"));
  }

  /** A form answer, field by field; {@link #build()} says which required ones are missing. */
  public static final class Builder {
    private final int playerId;
    private String video;
    private final String[] questions = new String[5];
    private Boolean stage1;
    private Boolean stage2;
    private Boolean stage3;
    private String comment;

    private Builder(int playerId) {
      this.playerId = playerId;
    }

    /**
     * @param video a link to the player's video (required)
     * @return this builder
     */
    public Builder video(String video) {
      this.video = Objects.requireNonNull(video, "video");
      return this;
    }

    /**
     * @param answer the answer to question 1 (required)
     * @return this builder
     */
    public Builder question1(String answer) {
      return question(1, answer);
    }

    /**
     * @param answer the answer to question 2 (required)
     * @return this builder
     */
    public Builder question2(String answer) {
      return question(2, answer);
    }

    /**
     * @param answer the answer to question 3 (required)
     * @return this builder
     */
    public Builder question3(String answer) {
      return question(3, answer);
    }

    /**
     * @param answer the answer to question 4 (required)
     * @return this builder
     */
    public Builder question4(String answer) {
      return question(4, answer);
    }

    /**
     * @param answer the answer to question 5 (required)
     * @return this builder
     */
    public Builder question5(String answer) {
      return question(5, answer);
    }

    private Builder question(int n, String answer) {
      questions[n - 1] = Objects.requireNonNull(answer, "question" + n);
      return this;
    }

    /**
     * @param stage1 whether stage 1 was passed; null (the default) for undecided
     * @param stage2 whether stage 2 was passed; null for undecided
     * @param stage3 whether stage 3 was passed; null for undecided
     * @return this builder
     */
    public Builder stages(Boolean stage1, Boolean stage2, Boolean stage3) {
      this.stage1 = stage1;
      this.stage2 = stage2;
      this.stage3 = stage3;
      return this;
    }

    /**
     * @param comment a comment (none by default)
     * @return this builder
     */
    public Builder comment(String comment) {
      this.comment = Objects.requireNonNull(comment, "comment");
      return this;
    }

    /**
     * @return the form answer
     * @throws IllegalStateException naming the required fields not set
     */
    public NewFormAnswer build() {
      List<String> missing = new ArrayList<>();
      if (video == null) missing.add("video");
      for (int i = 0; i < questions.length; i++) if (questions[i] == null) missing.add("question" + (i + 1));
      if (!missing.isEmpty()) throw new IllegalStateException("form answer: missing " + String.join(", ", missing));
      return new NewFormAnswer(playerId, video, questions[0], questions[1], questions[2], questions[3], questions[4], stage1, stage2, stage3, comment);
    }
  }
}
