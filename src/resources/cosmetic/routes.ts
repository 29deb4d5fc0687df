import { z } from "zod";
import { errors } from "../../core/errors.js";
import { cosmetic } from "../../entities/cosmetic.js";
import { queryInt } from "../../fields/query-params.js";
import { id } from "../../fields/rules.js";
import { type Cosmetic, Prisma } from "../../generated/prisma/client.js";
import { ifMatchHeader } from "../../http/if-match.js";
import { defineRoute, Versioned, versioned } from "../../http/route.js";
import { cosmeticEtag, versionsNamed } from "./etag.js";
import { cosmeticById, cosmeticUpdate, notUpdated } from "./queries.js";

const updateCosmeticBody = cosmetic.patchBody({ id: 3, price: 450, argument_EN: "A glowing halo", description: "null" });

export const cosmeticRoutes = [
  defineRoute({
    method: "GET",
    path: "/cosmetic/get-cosmetic",
    summary: "One cosmetic",
    description:
      "The cosmetic with this id. The ETag names this cosmetic's " +
      'version (`"cosmetic-3-v2"`): send it in If-None-Match for a 304 while it is unchanged, or in If-Match on ' +
      "update-cosmetic so the update applies only to that version.",
    version: "2.0.0",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({ id: queryInt(id).meta({ description: "The cosmetic's id", example: 3 }) }),
    response: versioned(cosmetic.full.response),
    errors: { 404: "No cosmetic has this id: `Cosmetic not found`." },
    async handler({ query }, { db }) {
      const found = await cosmeticById(db, query.id);
      if (!found) throw errors.notFound("Cosmetic");
      return new Versioned(cosmeticEtag(found), cosmetic.full.toJson(found));
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/cosmetic/update-cosmetic",
    summary: "Change one or more fields of a cosmetic",
    description:
      "A partial update: id plus at least one other field; only the fields sent change, in one statement. " +
      "The English description may be sent as argument_EN or under its name in the answer; both with " +
      'different values is a 400. The nullable fields are cleared by null or the string "null"; null for another field is a 400. ' +
      "Returns the whole cosmetic after the change, with its new ETag. " +
      "With If-Match (the ETag of a previous get-cosmetic or update), the update applies only if the cosmetic is " +
      "still at that version, else 412 and nothing is written: two clients editing the same cosmetic cannot overwrite " +
      "each other unseen. A malformed If-Match is a 400. Without If-Match the update applies unconditionally.",
    callers: ["A", "B", "D"],
    body: updateCosmeticBody,
    headers: z.object({ "If-Match": ifMatchHeader.optional() }),
    response: versioned(cosmetic.full.response),
    errors: {
      404: "No cosmetic has this id: `Cosmetic not found`.",
      409: "The name is another cosmetic's: `Cosmetic name 'Halo' is already used (unique constraint cosmetics_name_key)`.",
      412: "If-Match names none of the cosmetic's current version: `Cosmetic 3 changed since the ETag sent in If-Match; nothing was written`.",
    },
    async oneStatement({ body, headers }, { db, auditedWrite }) {
      const { id: cosmeticId, ...changes } = body;
      const ifMatch = headers["If-Match"];
      // One UPDATE of the fields sent, conditional on the version when If-Match is sent, with its audit
      // entry and the values it replaces: concurrent updates of other fields are kept, and a stale If-Match
      // writes nothing.
      const versions = ifMatch ? versionsNamed(ifMatch, cosmeticId) : undefined;
      const [updated] = await auditedWrite<Cosmetic>(cosmeticUpdate(cosmeticId, changes, versions), {
        action: "cosmetic.update",
        target: Prisma.sql`'cosmetic:' || w.id`,
        event: { type: "cosmetic.updated", columns: cosmetic.full.columns },
      });
      if (!updated) return notUpdated(db, cosmeticId, versions);
      return new Versioned(cosmeticEtag(updated), cosmetic.full.toJson(updated));
    },
  }),
];
