-- The operator's switches that every instance on this database obeys, kept apart from the data
-- (not in a backup: a restored database starts with none):
--   write_freeze  `cli freeze`: every write is refused (503 WRITES_FROZEN) until `cli thaw`;
--   drill         `restore` with DRILL_MODE=true: this database is a drill's copy, and a server
--                 started on it without DRILL_MODE=true refuses to start (src/db/service-state.ts).

-- CreateTable
CREATE TABLE "service_state" (
    "name" VARCHAR(32) NOT NULL,
    "value" JSONB NOT NULL,
    "setAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_state_pkey" PRIMARY KEY ("name")
);

-- Every statement that writes data (the resources, the audit log that every API and operator write
-- adds to, the webhook endpoints) first takes the freeze lock in shared mode, then looks for the
-- freeze. `cli freeze` takes it in exclusive mode before it sets the freeze: it waits for the write
-- transactions in flight to commit, and a write that comes after finds the freeze (a volatile
-- function's statement sees what was committed before it), so a backup taken once `freeze` has
-- returned holds every write ever acknowledged. The freeze's own transaction writes its audit entry.
-- The service's bookkeeping (a key's last use, webhook deliveries, the outbox's pruning, the renewal
-- of ETag versions at start) goes on.
CREATE FUNCTION "refuse_frozen_write"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  frozen RECORD;
BEGIN
  -- A renewal of the ETag versions (src/db/versions.ts, at start after a copy) changes no data.
  IF current_setting('community.renewing_versions', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(7305693157);
  SELECT "value", "setAt", "xmin" = pg_current_xact_id()::xid AS own INTO frozen FROM "service_state" WHERE "name" = 'write_freeze';
  IF FOUND AND NOT frozen.own THEN
    RAISE EXCEPTION 'writes are frozen since %: %',
      to_char(frozen."setAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), frozen."value"->>'reason'
      USING ERRCODE = 'WF001';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "players_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "players" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "cosmetics_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "cosmetics" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "form_answers_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "form_answers" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "infected_stats_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "infected_stats" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "temporary_items_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "temporary_items" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "reward_logs_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "reward_logs" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "worlds_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "worlds" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "parkour_maps_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "parkour_maps" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "audit_log_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
CREATE TRIGGER "webhook_endpoints_write_freeze" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "webhook_endpoints" FOR EACH STATEMENT EXECUTE FUNCTION "refuse_frozen_write"();
