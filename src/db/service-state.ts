import { Prisma } from "../generated/prisma/client.js";
import type { DbClient } from "./client.js";

/**
 * The operator's switches that every instance on a database obeys, in the table service_state
 * (migration 20261202100000_write_freeze, which says how the freeze holds): not data, not in a backup.
 */

/** The advisory lock every data write takes shared, and `freeze` exclusive (the migration's trigger names it too). */
export const WRITE_FREEZE_LOCK = 7305693157;
/** What a refused write's transaction fails with (the trigger's RAISE). */
const FROZEN_SQLSTATE = "WF001";

export interface WriteFreeze {
  /** When `freeze` set it (ISO 8601, whole seconds, the database's clock). */
  since: string;
  /** What the operator said, shown to every refused client. */
  reason: string;
  /** Who froze (cli:<os user>). */
  by: string;
}

export interface DrillMarker {
  /** When the backup restored into this database was made (its header). */
  backupMadeAt: string;
}

type Client = Pick<DbClient, "$queryRaw">;

/** A switch's value, with `since` (when it was set, to the second, as the API writes times). */
async function read<T>(client: Client, name: string): Promise<(T & { since: string }) | undefined> {
  const rows = await client.$queryRaw<{ value: T; since: string }[]>`
    SELECT "value", to_char("setAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS since
      FROM "service_state" WHERE "name" = ${name}`;
  const row = rows[0];
  return row && { ...row.value, since: row.since };
}

export const writeFreeze = (client: Client) => read<Omit<WriteFreeze, "since">>(client, "write_freeze");
export const drillMarker = (client: Client) => read<DrillMarker>(client, "drill");

/** Marks the database a drill's copy (restore with DRILL_MODE=true), in the restoring transaction. */
export async function markDrill(client: Client, marker: DrillMarker): Promise<void> {
  await client.$queryRaw`
    INSERT INTO "service_state" ("name", "value") VALUES ('drill', ${JSON.stringify(marker)}::jsonb)
    ON CONFLICT ("name") DO UPDATE SET "value" = EXCLUDED."value", "setAt" = now()`;
}

/**
 * In `freeze`'s transaction: waits for every write in flight (the exclusive lock), then sets the freeze
 * (`set`). When writes were frozen already, `current` says since when, and nothing is changed.
 */
export async function setWriteFreeze(client: Client, reason: string, by: string): Promise<{ set?: WriteFreeze; current?: WriteFreeze }> {
  await client.$queryRaw`SELECT pg_advisory_xact_lock(${WRITE_FREEZE_LOCK}::bigint)::text`;
  const current = await writeFreeze(client);
  if (current) return { current };
  await client.$queryRaw`
    INSERT INTO "service_state" ("name", "value") VALUES ('write_freeze', jsonb_build_object('reason', ${reason}::text, 'by', ${by}::text))`;
  return { set: await writeFreeze(client) };
}

/** Ends the freeze; what it was, or undefined when writes were not frozen. */
export async function clearWriteFreeze(client: Client): Promise<WriteFreeze | undefined> {
  const current = await writeFreeze(client);
  if (current) await client.$queryRaw`DELETE FROM "service_state" WHERE "name" = 'write_freeze'`;
  return current;
}

/** A write refused because writes are frozen: since when and why (from the trigger's message), else undefined. */
export function frozenWrite(error: unknown): { since: string; reason: string } | undefined {
  const cause = (error instanceof Prisma.PrismaClientKnownRequestError
    ? (error.meta as { driverAdapterError?: { cause?: { originalCode?: string; originalMessage?: string } } } | undefined)?.driverAdapterError?.cause
    : undefined) ?? { originalCode: (error as { code?: unknown } | null)?.code, originalMessage: (error as Error | null)?.message };
  if (cause.originalCode !== FROZEN_SQLSTATE || typeof cause.originalMessage !== "string") return undefined;
  const match = /^writes are frozen since (\S+): ([\s\S]*)$/.exec(cause.originalMessage);
  return { since: match?.[1] ?? "", reason: match?.[2] ?? "" };
}
