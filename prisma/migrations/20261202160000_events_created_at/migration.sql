-- GET /api/events?since= finds the first event written at or after a moment, and the hourly pruning the
-- events past the retention: both by "createdAt".

-- CreateIndex
CREATE INDEX "webhook_events_created_at_idx" ON "webhook_events"("createdAt");
