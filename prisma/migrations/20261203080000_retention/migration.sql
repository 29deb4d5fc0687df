-- Retention (docs/PRIVACY.md, "How long it is kept"): what the sweep (src/privacy/retention.ts) needs to find
-- what has been kept long enough, without reading every row at each sweep.

-- When a write last set the player's IP address (PLAYER_IP_RETAIN_DAYS counts from it). Rows from before
-- this migration count from it. A constant default: no table rewrite.
ALTER TABLE "players" ADD COLUMN "ipSetAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- Every write that names "ip" (even with the same value) starts the count again; an INSERT takes the
-- column's value (a restore keeps the backup's, a new row the default).
CREATE FUNCTION "stamp_ip_set_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."ipSetAt" := now();
  RETURN NEW;
END
$$;
CREATE TRIGGER "players_ip_set_at" BEFORE UPDATE OF "ip" ON "players" FOR EACH ROW EXECUTE FUNCTION "stamp_ip_set_at"();

-- What retention has removed from an audit entry's values: 0 nothing, 1 the players' IP addresses
-- (PLAYER_IP_RETAIN_DAYS), 2 every value (AUDIT_VALUES_RETAIN_DAYS). The index holds only the entries
-- the sweep may still change.
ALTER TABLE "audit_log" ADD COLUMN "retention" SMALLINT NOT NULL DEFAULT 0;
CREATE INDEX "audit_log_retention_idx" ON "audit_log"("at") WHERE "retention" < 2;
