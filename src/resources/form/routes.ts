import { z } from "zod";
import { foreignKeyViolation } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { bool, id, text } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { commentSchema, toFormAnswer } from "./shape.js";

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
  comment: commentSchema.default(""),
});

export const formRoutes = [
  defineRoute({
    method: "POST",
    path: "/form/create-form",
    summary: "Record a player's form answer; returns it with its new id",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createFormBody,
    successStatus: 201,
    async handler({ body }, { deps }) {
      try {
        return toFormAnswer(await deps.db.prisma.formAnswer.create({ data: body }));
      } catch (error) {
        if (foreignKeyViolation(error)) throw errors.validation(`playerId: no player has id ${body.playerId}`);
        throw error;
      }
    },
  }),
];
