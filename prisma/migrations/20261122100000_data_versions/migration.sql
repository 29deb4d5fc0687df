-- A cheap version per table behind a cached list, for ETags: bumped by a
-- statement-level trigger in the writing transaction, so a reader that sees
-- the new version also sees the new rows. (Prisma's diff ignores triggers.)

-- CreateTable
CREATE TABLE "data_versions" (
    "name" VARCHAR(64) NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "data_versions_pkey" PRIMARY KEY ("name")
);

INSERT INTO "data_versions" ("name") VALUES ('players'), ('cosmetics'), ('infected_stats'), ('temporary_items'), ('parkour_maps');

CREATE FUNCTION "bump_data_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "data_versions" SET "version" = "version" + 1 WHERE "name" = TG_TABLE_NAME;
  RETURN NULL;
END
$$;

CREATE TRIGGER "players_data_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "players"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "cosmetics_data_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "cosmetics"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "infected_stats_data_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "infected_stats"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "temporary_items_data_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "temporary_items"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "parkour_maps_data_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "parkour_maps"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
