-- Leaderboards (docs/CALLING.md, "Leaderboards"): the top players and a player's rank by each statistic of
-- infected_stats, all-time and for a period (a day, a week, a month in LEADERBOARD_TIME_ZONE, or a named
-- season). All-time boards read infected_stats through one index per statistic; a period's board reads
-- what each player gained during it, counted by the database as the statistics change.

-- All-time: the top, a rank (the players above a value) and the players around one, by index. On the
-- value negated, then the player: the board's order (highest first, ties by player id) is the index's,
-- so that "the rows before this one" is one row comparison, (-value, playerId) < (-v, id), read in order.
CREATE INDEX "infected_stats_kill_rank_idx" ON "infected_stats"((-"kill"), "playerId");
CREATE INDEX "infected_stats_assist_rank_idx" ON "infected_stats"((-"assist"), "playerId");
CREATE INDEX "infected_stats_death_rank_idx" ON "infected_stats"((-"death"), "playerId");
CREATE INDEX "infected_stats_game_rank_idx" ON "infected_stats"((-"game"), "playerId");
CREATE INDEX "infected_stats_eligible_game_rank_idx" ON "infected_stats"((-"eligibleGame"), "playerId");
CREATE INDEX "infected_stats_win_z_rank_idx" ON "infected_stats"((-"winZ"), "playerId");
CREATE INDEX "infected_stats_win_h_rank_idx" ON "infected_stats"((-"winH"), "playerId");
CREATE INDEX "infected_stats_playtime_rank_idx" ON "infected_stats"((-"playtime"), "playerId");
CREATE INDEX "infected_stats_coin_rank_idx" ON "infected_stats"((-"coin"), "playerId");
CREATE INDEX "infected_stats_point_rank_idx" ON "infected_stats"((-"point"), "playerId");
CREATE INDEX "infected_stats_objectif_rank_idx" ON "infected_stats"((-"objectif"), "playerId");

-- A board's period: kind day | week | month (made by the service ahead of time, its key 2026-12-03,
-- 2026-W49, 2026-12) or season (an admin's, its key the season's name). A period counts from
-- "countedFrom" (its start, or later when it was made after its start) until "endsAt" (a season's is
-- set when it is ended). "announcedAt" and "endAnnouncedAt": when its events were written, by one
-- instance (src/leaderboards/periods.ts).
CREATE TABLE "leaderboard_periods" (
    "id" SERIAL NOT NULL,
    "kind" VARCHAR(8) NOT NULL,
    "key" VARCHAR(64) NOT NULL,
    "startsAt" TIMESTAMPTZ(3) NOT NULL,
    "endsAt" TIMESTAMPTZ(3),
    "countedFrom" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" CITEXT NOT NULL,
    "announcedAt" TIMESTAMPTZ(3),
    "endAnnouncedAt" TIMESTAMPTZ(3),

    CONSTRAINT "leaderboard_periods_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "leaderboard_periods_kind_check" CHECK ("kind" IN ('day', 'week', 'month', 'season')),
    CONSTRAINT "leaderboard_periods_ends_check" CHECK ("endsAt" IS NULL OR "endsAt" > "startsAt")
);
CREATE UNIQUE INDEX "leaderboard_periods_kind_key_key" ON "leaderboard_periods"("kind", "key");

-- What each player gained during a period, per statistic (a row once their statistics changed in it).
CREATE TABLE "leaderboard_entries" (
    "periodId" INTEGER NOT NULL,
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

    CONSTRAINT "leaderboard_entries_pkey" PRIMARY KEY ("periodId", "playerId")
);
ALTER TABLE "leaderboard_entries" ADD CONSTRAINT "leaderboard_entries_period_id_fkey" FOREIGN KEY ("periodId") REFERENCES "leaderboard_periods"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "leaderboard_entries" ADD CONSTRAINT "leaderboard_entries_player_id_fkey" FOREIGN KEY ("playerId") REFERENCES "players"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "leaderboard_entries_kill_rank_idx" ON "leaderboard_entries"("periodId", (-"kill"), "playerId");
CREATE INDEX "leaderboard_entries_assist_rank_idx" ON "leaderboard_entries"("periodId", (-"assist"), "playerId");
CREATE INDEX "leaderboard_entries_death_rank_idx" ON "leaderboard_entries"("periodId", (-"death"), "playerId");
CREATE INDEX "leaderboard_entries_game_rank_idx" ON "leaderboard_entries"("periodId", (-"game"), "playerId");
CREATE INDEX "leaderboard_entries_eligible_game_rank_idx" ON "leaderboard_entries"("periodId", (-"eligibleGame"), "playerId");
CREATE INDEX "leaderboard_entries_win_z_rank_idx" ON "leaderboard_entries"("periodId", (-"winZ"), "playerId");
CREATE INDEX "leaderboard_entries_win_h_rank_idx" ON "leaderboard_entries"("periodId", (-"winH"), "playerId");
CREATE INDEX "leaderboard_entries_playtime_rank_idx" ON "leaderboard_entries"("periodId", (-"playtime"), "playerId");
CREATE INDEX "leaderboard_entries_coin_rank_idx" ON "leaderboard_entries"("periodId", (-"coin"), "playerId");
CREATE INDEX "leaderboard_entries_point_rank_idx" ON "leaderboard_entries"("periodId", (-"point"), "playerId");
CREATE INDEX "leaderboard_entries_objectif_rank_idx" ON "leaderboard_entries"("periodId", (-"objectif"), "playerId");

-- Every change of a player's statistics adds what it changed to each period counting now (a new row:
-- all of it, from 0). A restore writes infected_stats before the periods: it adds nothing.
CREATE FUNCTION "count_leaderboard_gains"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NOT (NEW."kill" IS DISTINCT FROM OLD."kill" OR NEW."assist" IS DISTINCT FROM OLD."assist" OR NEW."death" IS DISTINCT FROM OLD."death" OR NEW."game" IS DISTINCT FROM OLD."game" OR NEW."eligibleGame" IS DISTINCT FROM OLD."eligibleGame" OR NEW."winZ" IS DISTINCT FROM OLD."winZ" OR NEW."winH" IS DISTINCT FROM OLD."winH" OR NEW."playtime" IS DISTINCT FROM OLD."playtime" OR NEW."coin" IS DISTINCT FROM OLD."coin" OR NEW."point" IS DISTINCT FROM OLD."point" OR NEW."objectif" IS DISTINCT FROM OLD."objectif") THEN
    RETURN NULL;
  END IF;
  INSERT INTO "leaderboard_entries" AS e ("periodId", "playerId", "kill", "assist", "death", "game", "eligibleGame", "winZ", "winH", "playtime", "coin", "point", "objectif")
  SELECT p."id", NEW."playerId", NEW."kill" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."kill" ELSE 0 END), NEW."assist" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."assist" ELSE 0 END), NEW."death" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."death" ELSE 0 END), NEW."game" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."game" ELSE 0 END), NEW."eligibleGame" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."eligibleGame" ELSE 0 END), NEW."winZ" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."winZ" ELSE 0 END), NEW."winH" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."winH" ELSE 0 END), NEW."playtime" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."playtime" ELSE 0 END), NEW."coin" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."coin" ELSE 0 END), NEW."point" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."point" ELSE 0 END), NEW."objectif" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."objectif" ELSE 0 END)
    FROM "leaderboard_periods" p
   WHERE p."countedFrom" <= now() AND (p."endsAt" IS NULL OR now() < p."endsAt")
  ON CONFLICT ("periodId", "playerId") DO UPDATE SET "kill" = e."kill" + EXCLUDED."kill", "assist" = e."assist" + EXCLUDED."assist", "death" = e."death" + EXCLUDED."death", "game" = e."game" + EXCLUDED."game", "eligibleGame" = e."eligibleGame" + EXCLUDED."eligibleGame", "winZ" = e."winZ" + EXCLUDED."winZ", "winH" = e."winH" + EXCLUDED."winH", "playtime" = e."playtime" + EXCLUDED."playtime", "coin" = e."coin" + EXCLUDED."coin", "point" = e."point" + EXCLUDED."point", "objectif" = e."objectif" + EXCLUDED."objectif";
  RETURN NULL;
END
$$;
CREATE TRIGGER "infected_stats_leaderboard_gains" AFTER INSERT OR UPDATE ON "infected_stats" FOR EACH ROW EXECUTE FUNCTION "count_leaderboard_gains"();

-- Written only with the writes that change statistics (refused then already) and by the service's periods
-- and an admin's seasons: frozen like the data.
CREATE TRIGGER "leaderboard_periods_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "leaderboard_periods" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
