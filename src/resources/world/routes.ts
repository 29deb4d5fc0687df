import { z } from "zod";
import { foreignKeyViolation, isRecordNotFound } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { clearableText, count, id, requireAChange, text, timestamp } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { flag, toWorld } from "./shape.js";

export const updateWorldBody = z
  .strictObject({
    id,
    name: text(64).optional(),
    ownerId: id.optional(),
    type: text(32).optional(),
    state: text(32).optional(),
    lastUsed: timestamp.optional(),
    status: text(32).optional(),
    spawnLocation: clearableText(255).optional(),
    gameruleRandomTickSpeed: count.optional(),
    gameruleDaylightCycle: flag.optional(),
    gamerulePvp: flag.optional(),
    gamerulePlayerDamage: flag.optional(),
    tag: clearableText(64).optional(),
  })
  .superRefine(requireAChange);

export const worldRoutes = [
  defineRoute({
    method: "PATCH",
    path: "/freebuild/update-world",
    summary: "Change one or more fields of a freebuild world; returns the whole world",
    callers: ["A", "B"],
    body: updateWorldBody,
    async handler({ body }, { deps }) {
      const { id: worldId, ...fields } = body;
      try {
        return toWorld(await deps.db.prisma.world.update({ where: { id: worldId }, data: fields }));
      } catch (error) {
        if (isRecordNotFound(error)) throw errors.notFound("World");
        if (foreignKeyViolation(error)) throw errors.validation(`ownerId: no player has id ${fields.ownerId}`);
        throw error;
      }
    },
  }),
];
