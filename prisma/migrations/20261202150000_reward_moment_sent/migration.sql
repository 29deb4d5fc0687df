-- A reward is one grant per (player, reward, moment) only when the request sent its moment: a client
-- that sends its own timestamp retries with it. A request without rewardedAt is never a duplicate of
-- another (decisions.md): two rewards in the same second (a double kill) are two logs, and a retry of
-- such a request is recognised by its Idempotency-Key. "rewardedAtSent" says which; the rows written
-- before this migration were all checked as sent ones, and stay so.

-- AlterTable: the rows there are take true from the column's first default (no rewrite of the table), new ones false.
ALTER TABLE "reward_logs" ADD COLUMN "rewardedAtSent" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "reward_logs" ALTER COLUMN "rewardedAtSent" SET DEFAULT false;

-- The unique index, now over the sent moments only (schema.prisma cannot say WHERE: its @@unique names it).
DROP INDEX "reward_logs_player_reward_time_key";
CREATE UNIQUE INDEX "reward_logs_player_reward_time_key" ON "reward_logs"("playerId", "rewardId", "rewardedAt") WHERE "rewardedAtSent";
