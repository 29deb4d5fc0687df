import { insertColumns } from "../../db/sql.js";
import { formAnswer } from "../../entities/form.js";
import { type FormAnswer, Prisma } from "../../generated/prisma/client.js";
import { defineRoute } from "../../http/route.js";
import { ERASED_REPLAY } from "../../privacy/erasure.js";

const createFormBody = formAnswer.createBody({
  playerId: 2,
  video: "https://video.example/alex-audition",
  question1: "Alex",
  question2: "17",
  question3: "Two years of building",
  question4: "Evenings",
  question5: "I love redstone",
});

export const formRoutes = [
  defineRoute({
    method: "POST",
    path: "/form/create-form",
    summary: "Record a form answer",
    description:
      "Every field of FormAnswer but its id; those with a default may be left out. A boolean comment is stored as its " +
      "text. An unknown player is a 400 naming it. Returns the answer with its new id.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createFormBody,
    response: formAnswer.full.response,
    errors: { 410: ERASED_REPLAY },
    successStatus: 201,
    unknownReference: { of: formAnswer, kind: "VALIDATION" },
    async oneStatement({ body }, { auditedWrite }) {
      // The answer and its audit entry (the answer as stored, but its id), in one statement.
      const [row] = await auditedWrite<FormAnswer>(Prisma.sql`INSERT INTO form_answers ${insertColumns(body)} RETURNING *`, {
        action: "form.create",
        target: Prisma.sql`'form_answer:' || w.id`,
        changes: formAnswer.changesSql("w"),
        event: { type: "form.created", columns: formAnswer.full.columns },
      });
      return formAnswer.full.toJson(row!);
    },
  }),
];
