-- Sync by change (docs/CALLING.md, "Keeping a cache in sync"): every row of a
-- listed table carries the id of the transaction that last wrote it
-- ("writtenBy", pg_current_xact_id() as bigint, set by a row trigger on INSERT
-- and UPDATE whatever the statement sets), and data_versions counts the
-- statements that deleted rows ("deletions", bumped by a statement trigger on
-- DELETE and TRUNCATE; concurrent bumps queue on the row, so none is lost). A
-- sync token is the xmin of the snapshot an answer was read under, with the
-- count that snapshot saw: every transaction below the xmin had ended, so the
-- next sync asks for the rows with "writtenBy" >= xmin, and answers 410 when
-- the count moved (a deletion the client's answer did not reflect). A count,
-- not the deleting transaction's id: a long transaction elsewhere on the
-- server holds every snapshot's xmin back, and an id compared with it would
-- answer 410 to the fresh list's token too, until that transaction ended.
-- (Prisma's diff ignores triggers.)

CREATE FUNCTION "stamp_written_by"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."writtenBy" := pg_current_xact_id()::text::bigint;
  RETURN NEW;
END
$$;

CREATE FUNCTION "record_deletion"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "data_versions" SET "deletions" = "deletions" + 1 WHERE "name" = TG_TABLE_NAME;
  RETURN NULL;
END
$$;

-- AlterTable
ALTER TABLE "data_versions" ADD COLUMN "deletions" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "players" ADD COLUMN "writtenBy" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;
ALTER TABLE "infected_stats" ADD COLUMN "writtenBy" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;
ALTER TABLE "temporary_items" ADD COLUMN "writtenBy" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;
ALTER TABLE "parkour_maps" ADD COLUMN "writtenBy" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;

-- The players of a grade are read in keyset batches on id: (gradeId, id) serves each batch
-- without sorting the grade's rows again.
DROP INDEX "players_grade_id_idx";
CREATE INDEX "players_grade_id_idx" ON "players"("gradeId", "id");

-- CreateIndex
CREATE INDEX "players_written_by_idx" ON "players"("writtenBy");
CREATE INDEX "infected_stats_written_by_idx" ON "infected_stats"("writtenBy");
CREATE INDEX "temporary_items_written_by_idx" ON "temporary_items"("writtenBy");
CREATE INDEX "parkour_maps_written_by_idx" ON "parkour_maps"("writtenBy");

CREATE TRIGGER "players_written_by" BEFORE INSERT OR UPDATE ON "players" FOR EACH ROW EXECUTE FUNCTION "stamp_written_by"();
CREATE TRIGGER "infected_stats_written_by" BEFORE INSERT OR UPDATE ON "infected_stats" FOR EACH ROW EXECUTE FUNCTION "stamp_written_by"();
CREATE TRIGGER "temporary_items_written_by" BEFORE INSERT OR UPDATE ON "temporary_items" FOR EACH ROW EXECUTE FUNCTION "stamp_written_by"();
CREATE TRIGGER "parkour_maps_written_by" BEFORE INSERT OR UPDATE ON "parkour_maps" FOR EACH ROW EXECUTE FUNCTION "stamp_written_by"();

CREATE TRIGGER "players_deleted_by" AFTER DELETE OR TRUNCATE ON "players" FOR EACH STATEMENT EXECUTE FUNCTION "record_deletion"();
CREATE TRIGGER "infected_stats_deleted_by" AFTER DELETE OR TRUNCATE ON "infected_stats" FOR EACH STATEMENT EXECUTE FUNCTION "record_deletion"();
CREATE TRIGGER "temporary_items_deleted_by" AFTER DELETE OR TRUNCATE ON "temporary_items" FOR EACH STATEMENT EXECUTE FUNCTION "record_deletion"();
CREATE TRIGGER "parkour_maps_deleted_by" AFTER DELETE OR TRUNCATE ON "parkour_maps" FOR EACH STATEMENT EXECUTE FUNCTION "record_deletion"();
