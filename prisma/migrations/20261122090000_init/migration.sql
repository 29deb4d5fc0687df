-- Initial schema: every resource of the API spec, and the API users.
-- Hand-written in the SQL that `prisma migrate diff` emits, so that an operator
-- with Prisma's schema engine can still run `prisma migrate deploy` here.

-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "citext";

-- CreateTable
CREATE TABLE "api_users" (
    "id" SERIAL NOT NULL,
    "username" CITEXT NOT NULL,
    "role" VARCHAR(32) NOT NULL DEFAULT 'USER',
    "keyHash" CHAR(64) NOT NULL,
    "keyHint" VARCHAR(16) NOT NULL,
    "createdAt" TIMESTAMPTZ(0) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotatedAt" TIMESTAMPTZ(0),
    "revokedAt" TIMESTAMPTZ(0),

    CONSTRAINT "api_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "players" (
    "id" SERIAL NOT NULL,
    "pseudo" CITEXT NOT NULL,
    "token" VARCHAR(255) NOT NULL,
    "credit" INTEGER NOT NULL DEFAULT 0,
    "gradeId" INTEGER NOT NULL DEFAULT 0,
    "modStatus" BOOLEAN NOT NULL DEFAULT false,
    "staff" BOOLEAN NOT NULL DEFAULT false,
    "alert" BOOLEAN NOT NULL DEFAULT false,
    "nickname" CITEXT,
    "firstConnection" TIMESTAMPTZ(0) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "totalTimeConnection" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "status" VARCHAR(32) NOT NULL DEFAULT 'Offline',
    "ip" VARCHAR(45) NOT NULL,
    "chatId" VARCHAR(64),
    "language" VARCHAR(8) NOT NULL DEFAULT 'FR',
    "streamerPoint" INTEGER NOT NULL DEFAULT 0,
    "tag" VARCHAR(64),
    "color" VARCHAR(32),
    "highclub" BOOLEAN NOT NULL DEFAULT false,
    "vote" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "players_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cosmetics" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(128) NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "rarity" VARCHAR(64) NOT NULL,
    "game" VARCHAR(64) NOT NULL,
    "argumentFr" VARCHAR(1000) NOT NULL,
    "argumentEn" VARCHAR(1000) NOT NULL,
    "image" VARCHAR(255) NOT NULL,
    "lootbox" BOOLEAN NOT NULL DEFAULT false,
    "price" INTEGER NOT NULL DEFAULT 0,
    "description" VARCHAR(1000),
    "collection" VARCHAR(128),
    "render" VARCHAR(255),
    "permanent" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "cosmetics_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "form_answers" (
    "id" SERIAL NOT NULL,
    "playerId" INTEGER NOT NULL,
    "video" VARCHAR(255) NOT NULL,
    "question1" VARCHAR(2000) NOT NULL,
    "question2" VARCHAR(2000) NOT NULL,
    "question3" VARCHAR(2000) NOT NULL,
    "question4" VARCHAR(2000) NOT NULL,
    "question5" VARCHAR(2000) NOT NULL,
    "stage1" BOOLEAN,
    "stage2" BOOLEAN,
    "stage3" BOOLEAN,
    "comment" VARCHAR(2000) NOT NULL DEFAULT '',

    CONSTRAINT "form_answers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "infected_stats" (
    "playerId" INTEGER NOT NULL,
    "kill" INTEGER NOT NULL DEFAULT 0,
    "assist" INTEGER NOT NULL DEFAULT 0,
    "death" INTEGER NOT NULL DEFAULT 0,
    "game" INTEGER NOT NULL DEFAULT 0,
    "eligibleGame" INTEGER NOT NULL DEFAULT 0,
    "winZ" INTEGER NOT NULL DEFAULT 0,
    "winH" INTEGER NOT NULL DEFAULT 0,
    "playtime" INTEGER NOT NULL DEFAULT 0,
    "coin" INTEGER NOT NULL DEFAULT 0,
    "point" INTEGER NOT NULL DEFAULT 0,
    "objectif" INTEGER NOT NULL DEFAULT 0,
    "newPlayer" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "infected_stats_pkey" PRIMARY KEY ("playerId")
);

-- CreateTable
CREATE TABLE "temporary_items" (
    "id" SERIAL NOT NULL,
    "itemName" VARCHAR(128) NOT NULL,
    "itemDescription" VARCHAR(1000) NOT NULL,
    "price" INTEGER NOT NULL DEFAULT 0,
    "startDate" TIMESTAMPTZ(0) NOT NULL,
    "endDate" TIMESTAMPTZ(0) NOT NULL,

    CONSTRAINT "temporary_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reward_logs" (
    "id" SERIAL NOT NULL,
    "playerId" INTEGER NOT NULL,
    "rewardId" INTEGER NOT NULL,
    "rewardedAt" TIMESTAMPTZ(0) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reward_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "worlds" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "type" VARCHAR(32) NOT NULL,
    "state" VARCHAR(32) NOT NULL,
    "lastUsed" TIMESTAMPTZ(0) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status" VARCHAR(32) NOT NULL,
    "spawnLocation" VARCHAR(255),
    "gameruleRandomTickSpeed" INTEGER NOT NULL DEFAULT 3,
    "gameruleDaylightCycle" BOOLEAN NOT NULL DEFAULT true,
    "gamerulePvp" BOOLEAN NOT NULL DEFAULT true,
    "gamerulePlayerDamage" BOOLEAN NOT NULL DEFAULT true,
    "tag" VARCHAR(64),

    CONSTRAINT "worlds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "parkour_maps" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "enable" BOOLEAN NOT NULL DEFAULT true,
    "spawnLocation" VARCHAR(255),
    "difficulty" VARCHAR(32),

    CONSTRAINT "parkour_maps_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_users_username_key" ON "api_users"("username");

-- CreateIndex
CREATE UNIQUE INDEX "api_users_key_hash_key" ON "api_users"("keyHash");

-- CreateIndex
CREATE UNIQUE INDEX "players_pseudo_key" ON "players"("pseudo");

-- CreateIndex
CREATE UNIQUE INDEX "players_nickname_key" ON "players"("nickname");

-- CreateIndex
CREATE INDEX "players_grade_id_idx" ON "players"("gradeId");

-- CreateIndex
CREATE UNIQUE INDEX "cosmetics_name_key" ON "cosmetics"("name");

-- CreateIndex
CREATE INDEX "form_answers_player_id_idx" ON "form_answers"("playerId");

-- CreateIndex
CREATE INDEX "temporary_items_active_idx" ON "temporary_items"("startDate", "endDate");

-- CreateIndex
CREATE UNIQUE INDEX "reward_logs_player_reward_time_key" ON "reward_logs"("playerId", "rewardId", "rewardedAt");

-- CreateIndex
CREATE INDEX "worlds_owner_id_idx" ON "worlds"("ownerId");

-- AddForeignKey
ALTER TABLE "form_answers" ADD CONSTRAINT "form_answers_player_id_fkey" FOREIGN KEY ("playerId") REFERENCES "players"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "infected_stats" ADD CONSTRAINT "infected_stats_player_id_fkey" FOREIGN KEY ("playerId") REFERENCES "players"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reward_logs" ADD CONSTRAINT "reward_logs_player_id_fkey" FOREIGN KEY ("playerId") REFERENCES "players"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "worlds" ADD CONSTRAINT "worlds_owner_id_fkey" FOREIGN KEY ("ownerId") REFERENCES "players"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Non-negative amounts and counters: the API rejects them with a 400 first;
-- these keep imports and future code paths honest. (Prisma's diff ignores
-- CHECK constraints, so `prisma migrate` leaves them alone.)
ALTER TABLE "players" ADD CONSTRAINT "players_amounts_check" CHECK ("credit" >= 0 AND "streamerPoint" >= 0 AND "vote" >= 0 AND "totalTimeConnection" >= 0);
ALTER TABLE "cosmetics" ADD CONSTRAINT "cosmetics_price_check" CHECK ("price" >= 0);
ALTER TABLE "temporary_items" ADD CONSTRAINT "temporary_items_price_check" CHECK ("price" >= 0);
ALTER TABLE "temporary_items" ADD CONSTRAINT "temporary_items_dates_check" CHECK ("endDate" > "startDate");
ALTER TABLE "infected_stats" ADD CONSTRAINT "infected_stats_counters_check" CHECK ("kill" >= 0 AND "assist" >= 0 AND "death" >= 0 AND "game" >= 0 AND "eligibleGame" >= 0 AND "winZ" >= 0 AND "winH" >= 0 AND "playtime" >= 0 AND "coin" >= 0 AND "point" >= 0 AND "objectif" >= 0);
ALTER TABLE "worlds" ADD CONSTRAINT "worlds_tick_speed_check" CHECK ("gameruleRandomTickSpeed" >= 0);
