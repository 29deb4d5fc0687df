-- The event stream's catch-up by type (GET /api/events?types=…, src/events/outbox.ts, eventsBetween):
-- each type is read on this index in the stream's order, PAGE events at a time, so that a resume of a
-- rare type reads its own events and not the whole retention.
CREATE INDEX "webhook_events_type_idx" ON "webhook_events"("type", "writtenBy", "id");
