import { z } from "zod";
import { defineEntity, field } from "../fields/entity.js";
import { text } from "../fields/rules.js";

/** Typed bool in the spec's tables and a string in its sample: a bool is stored as its text. */
const commentRule = z.union([text(2000, 0), z.boolean()], { error: "expected a string (or a boolean)" }).transform((v) => String(v));

export const formAnswer = defineEntity({
  table: "form_answers",
  kind: "form",
  fields: {
    id: field.id().describe("Answer id"),
    playerId: field.id().references("players").describe("Id of the answering player"),
    video: field
      .text(255, 0)
      .onCreate((rule) => rule.min(1, "expected a non-empty string"))
      .describe("Link to a video"),
    question1: field.text(2000, 0).describe("Answer to question 1"),
    question2: field.text(2000, 0).describe("Answer to question 2"),
    question3: field.text(2000, 0).describe("Answer to question 3"),
    question4: field.text(2000, 0).describe("Answer to question 4"),
    question5: field.text(2000, 0).describe("Answer to question 5"),
    stage1: field
      .bool()
      .nullable()
      .onCreate((rule) => rule.default(null))
      .describe("Whether stage 1 was passed; null until decided"),
    stage2: field
      .bool()
      .nullable()
      .onCreate((rule) => rule.default(null))
      .describe("Whether stage 2 was passed; null until decided"),
    stage3: field
      .bool()
      .nullable()
      .onCreate((rule) => rule.default(null))
      .describe("Whether stage 3 was passed; null until decided"),
    comment: field
      .custom(commentRule, z.string())
      .onCreate((rule) => rule.default(""))
      .describe("Comment (a boolean sent is stored as its text)"),
  },
  component: { id: "FormAnswer" },
});
