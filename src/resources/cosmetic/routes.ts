import { z } from "zod";
import { isRecordNotFound } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { bool, clearableText, count, id, queryInt, requireAChange, text } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { toCosmetic } from "./shape.js";

/**
 * The update names the English description `argument_EN` (the spec's
 * request) or `argumentEn` (its responses); both with different values is a
 * 400. description, collection and render are cleared by null or "null".
 */
export const updateCosmeticBody = z
  .strictObject({
    id,
    name: text(128).optional(),
    type: text(64).optional(),
    rarity: text(64).optional(),
    game: text(64).optional(),
    argumentFr: text(1000, 0).optional(),
    argument_EN: text(1000, 0).optional(),
    argumentEn: text(1000, 0).optional(),
    image: text(255, 0).optional(),
    lootbox: bool.optional(),
    price: count.optional(),
    description: clearableText(1000).optional(),
    collection: clearableText(128).optional(),
    render: clearableText(255).optional(),
    permanent: bool.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.argument_EN !== undefined && body.argumentEn !== undefined && body.argument_EN !== body.argumentEn) {
      ctx.addIssue({ code: "custom", path: ["argument_EN"], message: "differs from argumentEn: send one of them" });
    }
    requireAChange(body, ctx);
  });

export const cosmeticRoutes = [
  defineRoute({
    method: "GET",
    path: "/cosmetic/get-cosmetic",
    summary: "One cosmetic by id",
    version: "2.0.0",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({ id: queryInt(id) }),
    async handler({ query }, { deps }) {
      const cosmetic = await deps.db.prisma.cosmetic.findUnique({ where: { id: query.id } });
      if (!cosmetic) throw errors.notFound("Cosmetic");
      return toCosmetic(cosmetic);
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/cosmetic/update-cosmetic",
    summary: "Change one or more fields of a cosmetic; returns the whole cosmetic",
    callers: ["A", "B", "D"],
    body: updateCosmeticBody,
    async handler({ body }, { deps }) {
      const { id: cosmeticId, argument_EN, argumentEn, ...fields } = body;
      try {
        // One UPDATE of the fields sent: concurrent updates of other fields are kept.
        const cosmetic = await deps.db.prisma.cosmetic.update({
          where: { id: cosmeticId },
          data: { ...fields, argumentEn: argument_EN ?? argumentEn },
        });
        return toCosmetic(cosmetic);
      } catch (error) {
        if (isRecordNotFound(error)) throw errors.notFound("Cosmetic");
        throw error;
      }
    },
  }),
];
