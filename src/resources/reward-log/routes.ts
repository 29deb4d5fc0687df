import { z } from "zod";
import { foreignKeyViolation } from "../../db/prisma-errors.js";
import { errors } from "../../errors.js";
import { id, timestamp } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { toRewardLog } from "./shape.js";

const wholeSecondNow = () => new Date(Math.floor(Date.now() / 1000) * 1000);

export const createRewardLogBody = z.strictObject({
  playerId: id,
  /** Opaque: rewards are defined outside this service. */
  rewardId: id,
  rewardedAt: timestamp.optional().transform((at) => at ?? wholeSecondNow()),
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
      try {
        return toRewardLog(await deps.db.prisma.rewardLog.create({ data: body }));
      } catch (error) {
        // The decisions make an unknown player a 409 here (a 400 on the other routes).
        if (foreignKeyViolation(error)) throw errors.conflict(`playerId: no player has id ${body.playerId}`);
        throw error;
      }
    },
  }),
];
