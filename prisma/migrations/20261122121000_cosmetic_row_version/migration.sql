-- A version per cosmetic, for its ETag and for If-Match on update-cosmetic.
-- A row trigger bumps it on every UPDATE, whoever writes (the API, the
-- import's upsert, an operator's SQL), so an ETag can never outlive a change.
-- The table-wide version of cosmetics served only get-cosmetic's ETag: it goes.
-- (Prisma's diff ignores triggers.)

-- AlterTable
ALTER TABLE "cosmetics" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

CREATE FUNCTION "bump_row_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."version" := OLD."version" + 1;
  RETURN NEW;
END
$$;

CREATE TRIGGER "cosmetics_row_version" BEFORE UPDATE ON "cosmetics"
  FOR EACH ROW EXECUTE FUNCTION "bump_row_version"();

DROP TRIGGER "cosmetics_data_version" ON "cosmetics";
DELETE FROM "data_versions" WHERE "name" = 'cosmetics';
