-- An update's audit entry keeps the values it replaced beside those it wrote:
-- the same fields as "changes", before the write. Null for creations, and for
-- entries recorded before this column existed.

-- AlterTable
ALTER TABLE "audit_log" ADD COLUMN "before" JSONB;
