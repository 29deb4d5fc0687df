-- The audit log of every write, and the Idempotency-Key answers of the POST
-- routes (kept 24 hours). Both are written in the transaction of the write
-- they belong to.

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" CITEXT NOT NULL,
    "action" VARCHAR(64) NOT NULL,
    "target" VARCHAR(255) NOT NULL,
    "changes" JSONB NOT NULL DEFAULT '{}',
    "requestId" VARCHAR(128),
    "clientAddress" VARCHAR(64),

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "apiUserId" INTEGER NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "route" VARCHAR(128) NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("apiUserId","key")
);

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

-- CreateIndex
CREATE INDEX "audit_log_actor_at_idx" ON "audit_log"("actor", "at");

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("createdAt");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_api_user_id_fkey" FOREIGN KEY ("apiUserId") REFERENCES "api_users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
