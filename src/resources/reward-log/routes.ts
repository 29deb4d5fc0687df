import { insertColumns } from "../../db/sql.js";
import { rewardLog } from "../../entities/reward-log.js";
import { Prisma, type RewardLog } from "../../generated/prisma/client.js";
import { defineRoute } from "../../http/route.js";
import { ERASED_REPLAY } from "../../privacy/erasure.js";

const createRewardLogBody = rewardLog.createBody({ playerId: 1, rewardId: 42, rewardedAt: "2026-11-22T10:15:30.250+01:00" });

export const rewardLogRoutes = [
  defineRoute({
    method: "POST",
    path: "/website/create-reward-log",
    summary: "Record a reward given to a player",
    description:
      "The reward's id is opaque (rewards are defined outside this service). The moment accepts ISO 8601 with Z or an " +
      "offset, defaults to now, and is written in UTC whole seconds. A request that sends rewardedAt records the reward once per " +
      "player, reward and moment (a retry sends the same moment); without it, never a duplicate: two rewards in the same second " +
      "(a double kill) are two logs, and a retry is recognised by its Idempotency-Key. Formerly POST /website/create-reward (before 2.1.0).",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    body: createRewardLogBody,
    response: rewardLog.full.response,
    errors: {
      409:
        "The player does not exist (the message names it), or the request sent rewardedAt and the same player, reward and moment " +
        "are already recorded by a request that sent it: a retried request does not record a reward twice.",
      410: ERASED_REPLAY,
    },
    successStatus: 201,
    // An unknown player is a 409 on this route, where the other routes answer 400. A DUPLICATE here means "already
    // recorded" to clients (CALLING.md): only the reward's own uniqueness can be violated by the client's values.
    unknownReference: { of: rewardLog, kind: "REFERENCE_NOT_FOUND" },
    async oneStatement({ body }, { now, auditedWrite }) {
      const values = rewardLog.withDefaults(body, now());
      // Only a moment the client sent makes it one grant per (player, reward, moment): the partial unique index.
      const rewardedAtSent = body.rewardedAt !== undefined;
      // The log and its audit entry, in one statement; the entry holds the log as answered.
      const [row] = await auditedWrite<RewardLog>(Prisma.sql`INSERT INTO reward_logs ${insertColumns({ ...values, rewardedAtSent })} RETURNING *`, {
        action: "reward_log.create",
        target: Prisma.sql`'reward_log:' || w.id`,
        changes: rewardLog.changesSql("w"),
        event: { type: "reward_log.created", columns: rewardLog.full.columns },
      });
      return rewardLog.full.toJson(row!);
    },
  }),
];
