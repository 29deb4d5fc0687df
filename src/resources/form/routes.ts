import { z } from "zod";
import { foreignKeyViolation } from "../../db/prisma-errors.js";
import { insertColumns } from "../../db/sql.js";
import { errors } from "../../errors.js";
import { Prisma, type FormAnswer } from "../../generated/prisma/client.js";
import { bool, id, text } from "../../fields/rules.js";
import { defineRoute } from "../../http/route.js";
import { commentRule, formAnswer } from "./entity.js";

export const createFormBody = z.strictObject({
  playerId: id,
  video: text(255),
  question1: text(2000, 0),
  question2: text(2000, 0),
  question3: text(2000, 0),
  question4: text(2000, 0),
  question5: text(2000, 0),
  stage1: bool.nullable().default(null),
  stage2: bool.nullable().default(null),
  stage3: bool.nullable().default(null),
  comment: commentRule.default(""),
}).meta({
  example: {
    playerId: 2,
    video: "https://video.example/alex-audition",
    question1: "Alex",
    question2: "17",
    question3: "Two years of building",
    question4: "Evenings",
    question5: "I love redstone",
  },
});

export const formRoutes = [
  defineRoute({
    method: "POST",
    path: "/form/create-form",
    summary: "Record a form answer",
    description:
      "Required: playerId, video and question1 to question5. stage1 to stage3 are true, false or null (default null); " +
      'comment is text (default ""), a boolean being stored as its text. An unknown player is a 400 naming it. ' +
      "Returns the answer with its new id.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createFormBody,
    response: formAnswer.full.response,
    successStatus: 201,
    async oneStatement({ body }, { auditedWrite }) {
      try {
        // The answer and its audit entry (the answer as stored, but its id), in one statement.
        const [row] = await auditedWrite<FormAnswer>(Prisma.sql`INSERT INTO form_answers ${insertColumns(body)} RETURNING *`, {
          action: "form.create",
          target: Prisma.sql`'form_answer:' || w.id`,
          changes: Prisma.sql`to_jsonb(w) - 'id'`,
        });
        return formAnswer.full.toJson(row!);
      } catch (error) {
        if (foreignKeyViolation(error)) throw errors.validation(`playerId: no player has id ${body.playerId}`);
        throw error;
      }
    },
  }),
];
