-- Rotation with a grace period: the key replaced by the last rotation keeps
-- working until previousKeyExpiresAt (only its SHA-256 is kept, like the
-- current key's). Last used: per key, to the minute, written at most once a
-- minute per key by each instance (src/users/key-usage.ts).

-- AlterTable
ALTER TABLE "api_users" ADD COLUMN "keyLastUsedAt" TIMESTAMPTZ(0),
ADD COLUMN "previousKeyHash" CHAR(64),
ADD COLUMN "previousKeyHint" VARCHAR(16),
ADD COLUMN "previousKeyExpiresAt" TIMESTAMPTZ(0),
ADD COLUMN "previousKeyLastUsedAt" TIMESTAMPTZ(0);

-- CreateIndex
CREATE UNIQUE INDEX "api_users_previous_key_hash_key" ON "api_users"("previousKeyHash");
