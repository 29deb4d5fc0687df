-- Optional per-user allow-list of client addresses: comma-separated CIDRs,
-- validated and written by the operator CLI (`user allow-ip`). NULL: anywhere.

-- AlterTable
ALTER TABLE "api_users" ADD COLUMN "allowedIps" TEXT;
