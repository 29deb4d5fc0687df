import { z } from "zod";
import { isRecordNotFound } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { bool, clearableText, count, id, queryInt, requireAChange, text } from "../../http/fields.js";
import { defineRoute, Versioned } from "../../http/route.js";
import { cosmeticById } from "./queries.js";
import { cosmeticResponse, toCosmetic } from "./shape.js";

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
  })
  .meta({ example: { id: 3, price: 450, argument_EN: "A glowing halo", description: "null" } });

export const cosmeticRoutes = [
  defineRoute({
    method: "GET",
    path: "/cosmetic/get-cosmetic",
    summary: "One cosmetic",
    description: "The cosmetic with this id. The English description is written argumentEn.",
    version: "2.0.0",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({ id: queryInt(id).meta({ description: "The cosmetic's id", example: "3" }) }),
    response: cosmeticResponse,
    errors: { 404: "No cosmetic has this id: `Cosmetic not found`." },
    versioned: true,
    async handler({ query }, { deps }) {
      const { cosmetic, version } = await cosmeticById(deps.db.prisma, query.id);
      if (!cosmetic) throw errors.notFound("Cosmetic");
      return new Versioned(`cosmetics-v${version}-${query.id}`, toCosmetic(cosmetic));
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/cosmetic/update-cosmetic",
    summary: "Change one or more fields of a cosmetic",
    description:
      "A partial update: id plus at least one other field; only the fields sent change, in one statement. " +
      "The English description is argument_EN here (argumentEn is accepted too; both with different values is a 400). " +
      'description, collection and render are cleared by null or the string "null"; null for another field is a 400. ' +
      "Returns the whole cosmetic after the change.",
    callers: ["A", "B", "D"],
    body: updateCosmeticBody,
    response: cosmeticResponse,
    errors: {
      404: "No cosmetic has this id: `Cosmetic not found`.",
      409: "The name is another cosmetic's: `Cosmetic name 'Halo' is already used (unique constraint cosmetics_name_key)`.",
    },
    async handler({ body }, { db, audit }) {
      const { id: cosmeticId, argument_EN, argumentEn, ...fields } = body;
      const changes = { ...fields, argumentEn: argument_EN ?? argumentEn };
      try {
        // One UPDATE of the fields sent: concurrent updates of other fields are kept.
        const cosmetic = await db.cosmetic.update({ where: { id: cosmeticId }, data: changes });
        await audit({ action: "cosmetic.update", target: `cosmetic:${cosmeticId}`, changes });
        return toCosmetic(cosmetic);
      } catch (error) {
        if (isRecordNotFound(error)) throw errors.notFound("Cosmetic");
        throw error;
      }
    },
  }),
];
