-- Traces (docs/OPERATIONS.md, "Traces"): the W3C traceparent of the write that recorded an event, when
-- tracing was on; its webhook deliveries continue that trace and send it to the receiver. Null otherwise.
ALTER TABLE "webhook_events" ADD COLUMN "traceparent" VARCHAR(55);
