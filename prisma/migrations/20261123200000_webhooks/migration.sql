-- Webhooks (issue 17): endpoints, the transactional outbox of events, and one
-- delivery per (event, endpoint). An event and its deliveries are inserted by
-- the write they announce, in the same statement or transaction, and only when
-- an endpoint subscribes to them: a write that rolls back announces nothing.

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" SERIAL NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    -- The event types sent; [] sends every type.
    "events" JSONB NOT NULL DEFAULT '[]',
    -- "v1:<iv>:<tag>:<ciphertext>" (AES-256-GCM under WEBHOOKS_SECRET_KEY) or "plain:whsec_…".
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_events" (
    "id" BIGSERIAL NOT NULL,
    -- The webhook-id header: random, so that ids never repeat (a restored backup, another environment).
    "messageId" VARCHAR(64) NOT NULL DEFAULT ('msg_' || replace(gen_random_uuid()::text, '-', '')),
    "type" VARCHAR(64) NOT NULL,
    -- The resource as the API answers it, as JSON text (field order kept).
    "data" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "eventId" BIGINT NOT NULL,
    "endpointId" INTEGER NOT NULL,
    -- pending, delivered or failed.
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    -- When the next attempt is due; while an attempt is in flight, when its lease ends.
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Retries stop (failed) once this is older than WEBHOOKS_RETRY_FOR_MS; redeliver resets it.
    "retrySince" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastAttemptAt" TIMESTAMPTZ(3),
    -- The HTTP status of the last answer, null when none came (timeout, refused).
    "lastStatus" INTEGER,
    -- A short excerpt of the last answer's body, or the error.
    "lastResponse" VARCHAR(500),
    "deliveredAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"("status", "nextAttemptAt");
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries"("endpointId", "id");
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries"("eventId");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- New deliveries wake the delivery workers of every instance (LISTEN webhook_deliveries) when
-- their transaction commits; PostgreSQL sends one notification per transaction. Workers poll too.
CREATE FUNCTION "webhook_deliveries_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_deliveries', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER "webhook_deliveries_notify" AFTER INSERT ON "webhook_deliveries"
  FOR EACH ROW EXECUTE FUNCTION "webhook_deliveries_notify"();
