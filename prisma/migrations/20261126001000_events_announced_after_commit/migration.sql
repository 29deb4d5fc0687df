-- New events are announced on LISTEN webhook_events (and webhook_deliveries) by the instance that
-- committed them, after the commit (src/events/channels.ts), no longer by a
-- trigger: a NOTIFY inside the writing transaction holds PostgreSQL's one
-- notification lock from before the commit until it is flushed, so that every
-- concurrent write recording an event committed one at a time.
DROP TRIGGER "webhook_events_notify" ON "webhook_events";
DROP FUNCTION "webhook_events_notify"();

-- The same for the delivery workers (LISTEN webhook_deliveries), which the
-- writing instance now wakes with the same announcement.
DROP TRIGGER "webhook_deliveries_notify" ON "webhook_deliveries";
DROP FUNCTION "webhook_deliveries_notify"();
