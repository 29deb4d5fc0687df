-- Sync tokens and cursors bound to their database (docs/CALLING.md, "Token
-- lifetime"). A token names transaction ids, which every database of a server
-- shares and which a restore does not keep in step with the data: tokens are
-- sealed (HMAC, src/http/list-params.ts) under a key that this database alone
-- has. The key mixes a secret made here, once, with the server's system
-- identifier, the database's oid and this table's own oid: another database,
-- another server, a copy made with CREATE DATABASE … TEMPLATE, and a restore
-- (pg_restore creates the table anew, with a new oid, even when it brings the
-- secret back) each have another key, so their tokens are told to start again
-- (410) rather than answered from the wrong data.

-- CreateTable
CREATE TABLE "sync_identity" (
    "id" SMALLINT NOT NULL DEFAULT 1,
    "secret" BYTEA NOT NULL,

    CONSTRAINT "sync_identity_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sync_identity_one_row" CHECK ("id" = 1)
);

-- 244 random bits (gen_random_uuid is core since PostgreSQL 13, and in PGlite).
INSERT INTO "sync_identity" ("secret")
  VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- The key, hex. pg_control_system() may be refused to a role on a managed server: the other parts still
-- bind the key to this database (its secret and oids).
CREATE FUNCTION "sync_key"() RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  server text := '';
BEGIN
  BEGIN
    SELECT system_identifier::text INTO server FROM pg_control_system();
  EXCEPTION WHEN insufficient_privilege THEN
    server := '';
  END;
  RETURN (SELECT encode(sha256(i."secret" || convert_to(concat_ws(':', server,
            (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()),
            'sync_identity'::regclass::oid), 'UTF8')), 'hex')
            FROM "sync_identity" i);
END
$$;

-- The tables' version rows are bumped BEFORE each statement touches a row, no longer after: a
-- transaction then takes its table's version row before any row of the table, so two transactions
-- that each write two players in separate statements, in opposite order, queue on the version row
-- instead of deadlocking (one held a player and waited for the version row, the other the reverse).
DROP TRIGGER "players_data_version" ON "players";
DROP TRIGGER "infected_stats_data_version" ON "infected_stats";
DROP TRIGGER "temporary_items_data_version" ON "temporary_items";
DROP TRIGGER "parkour_maps_data_version" ON "parkour_maps";

CREATE TRIGGER "players_data_version" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "players"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "infected_stats_data_version" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "infected_stats"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "temporary_items_data_version" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "temporary_items"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
CREATE TRIGGER "parkour_maps_data_version" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "parkour_maps"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_version"();
