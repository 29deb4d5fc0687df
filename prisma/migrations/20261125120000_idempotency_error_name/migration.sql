-- A stored failure's kind (the catalogue's name, sent in the Error-Name header), so that a replay
-- names it as the first answer did. Null for a success, and for failures stored before this column.

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN "responseError" VARCHAR(64);
