import { z } from "zod";
import { conflictMessage } from "../../db/constraints.js";
import { foreignKeyViolation, uniqueViolation } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { id, timestamp } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { toRewardLog } from "./shape.js";

export const createRewardLogBody = z.strictObject({
  playerId: id,
  /** Opaque: rewards are defined outside this service. */
  rewardId: id,
  /** Defaults to now, in the handler. */
  rewardedAt: timestamp.optional(),
});

export const rewardLogRoutes = [
  defineRoute({
    method: "POST",
    path: "/website/create-reward-log",
    summary: "Record a reward given to a player; a retry of the same (player, reward, moment) is a 409",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createRewardLogBody,
    successStatus: 201,
    async handler({ body }, { deps }) {
      const rewardedAt = body.rewardedAt ?? new Date(Math.floor(deps.now().getTime() / 1000) * 1000);
      try {
        return toRewardLog(await deps.db.prisma.rewardLog.create({ data: { ...body, rewardedAt } }));
      } catch (error) {
        // The decisions make an unknown player a 409 here (a 400 on the other routes).
        if (foreignKeyViolation(error)) throw errors.conflict(`playerId: no player has id ${body.playerId}`);
        const violation = uniqueViolation(error);
        if (violation) throw errors.conflict(conflictMessage(violation, { ...body, rewardedAt }));
        throw error;
      }
    },
  }),
];
