-- The end of a rotated-away key's grace period, to the millisecond: stored to
-- the second (rounded), a 2 s grace lasted anywhere from 1.5 to 2.5 s.

-- AlterTable
ALTER TABLE "api_users" ALTER COLUMN "previousKeyExpiresAt" SET DATA TYPE TIMESTAMPTZ(3);
