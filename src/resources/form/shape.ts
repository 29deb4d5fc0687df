import { z } from "zod";
import { bool, id, text } from "../../http/fields.js";
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
