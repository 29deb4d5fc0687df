import { z } from "zod";
import { conflictMessage } from "../../db/constraints.js";
import { foreignKeyViolation, uniqueViolation } from "../../db/prisma-errors.js";
import { insertColumns } from "../../db/sql.js";
import { errors } from "../../errors.js";
import { Prisma, type RewardLog } from "../../generated/prisma/client.js";
import { id } from "../../fields/rules.js";
import { timestamp, timestampSql } from "../../fields/timestamp.js";
import { defineRoute } from "../../http/route.js";
import { rewardLog } from "./entity.js";

export const createRewardLogBody = z.strictObject({
  playerId: id,
  /** Opaque: rewards are defined outside this service. */
  rewardId: id,
  /** Defaults to now, in the handler. */
  rewardedAt: timestamp.optional(),
}).meta({ example: { playerId: 1, rewardId: 42, rewardedAt: "2026-11-22T10:15:30.250+01:00" } });

export const rewardLogRoutes = [
  defineRoute({
    method: "POST",
    path: "/website/create-reward-log",
    summary: "Record a reward given to a player",
    description:
      "rewardId is opaque (rewards are defined outside this service). rewardedAt accepts ISO 8601 with Z or an offset, " +
      "defaults to now, and is written in UTC whole seconds. Formerly POST /website/create-reward (before 2.1.0).",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createRewardLogBody,
    response: rewardLog.full.response,
    errors: {
      409:
        "The player does not exist (`playerId: no player has id 77`), or the same (playerId, rewardId, rewardedAt) is " +
        "already recorded: a retried request does not record a reward twice.",
    },
    successStatus: 201,
    async oneStatement({ body }, { now, auditedWrite }) {
      const rewardedAt = body.rewardedAt ?? new Date(Math.floor(now().getTime() / 1000) * 1000);
      try {
        // The log and its audit entry, in one statement; the entry holds the log as answered.
        const [row] = await auditedWrite<RewardLog>(
          Prisma.sql`INSERT INTO reward_logs ${insertColumns({ ...body, rewardedAt })} RETURNING *`,
          {
            action: "reward_log.create",
            target: Prisma.sql`'reward_log:' || w.id`,
            changes: Prisma.sql`jsonb_build_object('playerId', w."playerId", 'rewardId', w."rewardId",
                                 'rewardedAt', ${Prisma.raw(timestampSql('w."rewardedAt"'))})`,
          },
        );
        return rewardLog.full.toJson(row!);
      } catch (error) {
        // An unknown player is a 409 on this route, where the other routes answer 400.
        if (foreignKeyViolation(error)) throw errors.conflict(`playerId: no player has id ${body.playerId}`);
        const violation = uniqueViolation(error);
        if (violation) throw errors.conflict(conflictMessage(violation, { ...body, rewardedAt }));
        throw error;
      }
    },
  }),
];
