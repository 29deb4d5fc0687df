import { z } from "zod";
import { bool, id, out, text } from "../../http/fields.js";
import type { FormAnswer } from "../../generated/prisma/client.js";

/** `comment` is typed bool in the spec's tables and a string in its sample: a bool is stored as its text. */
export const commentSchema = z
  .union([text(2000, 0), z.boolean()], { error: "expected a string (or a boolean)" })
  .transform((v) => String(v));

export const formAnswerSchema = z.strictObject({
  id,
  playerId: id,
  video: text(255, 0),
  question1: text(2000, 0),
  question2: text(2000, 0),
  question3: text(2000, 0),
  question4: text(2000, 0),
  question5: text(2000, 0),
  stage1: bool.nullable(),
  stage2: bool.nullable(),
  stage3: bool.nullable(),
  comment: commentSchema,
});

export function toFormAnswer(f: FormAnswer) {
  return {
    id: f.id,
    playerId: f.playerId,
    video: f.video,
    question1: f.question1,
    question2: f.question2,
    question3: f.question3,
    question4: f.question4,
    question5: f.question5,
    stage1: f.stage1,
    stage2: f.stage2,
    stage3: f.stage3,
    comment: f.comment,
  };
}

export const formAnswerResponse = z
  .strictObject({
    id: out.id("Answer id"),
    playerId: out.id("Id of the answering player"),
    video: out.text("Link to a video"),
    question1: out.text("Answer to question 1"),
    question2: out.text("Answer to question 2"),
    question3: out.text("Answer to question 3"),
    question4: out.text("Answer to question 4"),
    question5: out.text("Answer to question 5"),
    stage1: z.boolean().nullable().meta({ description: "Whether stage 1 was passed; null until decided" }),
    stage2: z.boolean().nullable().meta({ description: "Whether stage 2 was passed; null until decided" }),
    stage3: z.boolean().nullable().meta({ description: "Whether stage 3 was passed; null until decided" }),
    comment: out.text("Comment (a boolean sent is stored as its text)"),
  })
  .meta({ id: "FormAnswer" });
