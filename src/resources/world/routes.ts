import { errors } from "../../core/errors.js";
import { world } from "../../entities/world.js";
import { Prisma, type World } from "../../generated/prisma/client.js";
import { defineRoute } from "../../http/route.js";

const updateWorldBody = world.patchBody({ id: 4, state: "loaded", gamerulePvp: "false", tag: "event" });

export const worldRoutes = [
  defineRoute({
    method: "PATCH",
    path: "/freebuild/update-world",
    summary: "Change one or more fields of a freebuild world",
    description:
      "A partial update: id plus at least one other field; only the fields sent change, in one statement. The three " +
      'gamerule flags accept true/false and the texts "true"/"false", and are written as booleans. The nullable fields ' +
      'are cleared by null or "null". An unknown owner is a 400 naming it. Returns the whole world after the change.',
    callers: ["A", "B"],
    body: updateWorldBody,
    response: world.full.response,
    errors: { 404: "No world has this id: `World not found`." },
    unknownReference: { of: world, kind: "VALIDATION" },
    async oneStatement({ body }, { auditedWrite }) {
      const { id: worldId, ...fields } = body;
      // The fields sent and their audit entry, with the values they replace, in one statement.
      const [updated] = await auditedWrite<World>(world.update(worldId, fields), {
        action: "world.update",
        target: Prisma.sql`'world:' || w.id`,
        event: { type: "world.updated", columns: world.full.columns },
      });
      if (!updated) throw errors.notFound("World");
      return world.full.toJson(updated);
    },
  }),
];
