-- A player's erasure (GDPR art. 17): its receipt, kept apart from the erased data, in every backup, and
-- re-applied by a restore of a backup made before it (docs/PRIVACY.md). It names the player by id alone.

-- CreateTable
CREATE TABLE "player_erasures" (
    "id" VARCHAR(40) NOT NULL,
    "playerId" INTEGER NOT NULL,
    "erasedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "erasedBy" CITEXT NOT NULL,
    "removed" JSONB NOT NULL,
    "scrubbed" JSONB NOT NULL,

    CONSTRAINT "player_erasures_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "player_erasures_player_id_key" ON "player_erasures"("playerId");
