-- ETag versions bound to their database, as sync tokens are (20261125100000_sync_identity).
-- A restored database's counters (the lists' data_versions, each cosmetic's version) start where
-- the backup or dump left them, while the database it came from went on counting: the same ETag
-- would name two states, and a client would get 304 for data it never saw, or an If-Match would
-- apply over a change it never read. So each restore moves them past anything counted before, by a
-- random amount (src/db/versions.ts): `restore` does it in its transaction; after pg_restore or a
-- copy, the server does it at start, seeing that the sync key is not the one its versions were
-- counted under.

-- CreateTable
CREATE TABLE "version_identity" (
    "id" SMALLINT NOT NULL DEFAULT 1,
    "key" TEXT NOT NULL,

    CONSTRAINT "version_identity_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "version_identity_one_row" CHECK ("id" = 1)
);

INSERT INTO "version_identity" ("key") VALUES (sync_key());

-- A cosmetic's version is bumped by its row trigger on every UPDATE, whatever the statement sets,
-- except during a renewal (the transaction's setting community.renewing_versions), which sets it.
CREATE OR REPLACE FUNCTION "bump_row_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('community.renewing_versions', true) IS DISTINCT FROM 'on' THEN
    NEW."version" := OLD."version" + 1;
  END IF;
  RETURN NEW;
END
$$;
