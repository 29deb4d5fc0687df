-- Live events (issue 25, GET /api/events): the outbox records every event,
-- whether or not a webhook endpoint subscribes to it, stamped with the id of
-- the transaction that wrote it. A stream sends an event once every
-- transaction with a lower id has ended (the id is below the xmin of a
-- snapshot), in ("writtenBy", id) order: an order no later commit can insert
-- into, so that a client resumes after the last event it had, on any
-- instance, and gets every event since, once.

-- AlterTable
ALTER TABLE "webhook_events" ADD COLUMN "writtenBy" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;

-- CreateIndex
CREATE INDEX "webhook_events_written_by_idx" ON "webhook_events"("writtenBy", "id");

-- New events wake the streams of every instance (LISTEN webhook_events) when their
-- transaction commits: one notification per statement, merged by PostgreSQL per transaction.
CREATE FUNCTION "webhook_events_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_events', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "webhook_events_notify" AFTER INSERT ON "webhook_events"
  FOR EACH STATEMENT EXECUTE FUNCTION "webhook_events_notify"();
