import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Config } from "../core/config.js";
import type { DbClient } from "../db/client.js";
import { frozenWrite, writeFreeze } from "../db/service-state.js";
import { Prisma } from "../generated/prisma/client.js";
import { nulled } from "./erasure.js";

/**
 * Retention (docs/PRIVACY.md, "How long it is kept"): a sweep removes what its setting has kept long
 * enough, one short statement per batch. One instance sweeps at a time: it holds a lease in
 * service_state (the row `retention`, renewed at each batch, so that a crashed sweeper's lease ends
 * by itself), which also says when the last sweep ended and what it removed, for every instance.
 */

/** What a sweep removes, by kind: the label of retention_removed_total. */
export const RETENTION_KINDS = ["player_ip", "audit_ip", "audit_values", "outbox_events", "idempotency_records", "leaderboard_periods"] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];
export type Removed = Record<RetentionKind, number>;

export type RetentionSettings = Pick<
  Config,
  "playerIpRetainDays" | "auditValuesRetainDays" | "webhooksRetainDays" | "idempotencyRetainHours" | "leaderboardRetainDays"
>;

/** How often an instance sweeps (if no other one has swept meanwhile). */
export const SWEEP_EVERY_MS = 3_600_000;
const LEASE_MS = 300_000;
const BATCH = 5_000;
/** Periods deleted per statement: each takes its board's rows with it (ON DELETE CASCADE). */
const PERIODS_BATCH = 10;

export type SweepResult = { result: "done"; removed: Removed; seconds: number } | { result: "not_due" | "busy" | "frozen"; detail: string };

export interface LastSweep {
  /** When the last sweep that ran to its end ended (the database's clock), on which instance, what it removed. */
  finishedAt?: Date;
  sweptBy?: string;
  removed?: Removed;
  /** The instance holding the lease now (it is sweeping), if one does. */
  sweeping?: string;
}

const zero = (): Removed => Object.fromEntries(RETENTION_KINDS.map((k) => [k, 0])) as Removed;
const days = (n: number) => Prisma.sql`now() - ${n} * interval '1 day'`;

/** A batch's rows changed (BATCH of them: more may wait), and of those, the ones counted as removed. */
type Batch = { changed: number; removed: number };
const counted = async (statement: Promise<number>): Promise<Batch> => {
  const n = await statement;
  return { changed: n, removed: n };
};

/** The statements of one sweep, in order; each changes at most one batch of `limit` rows (the outbox's, all it may at once). */
function steps(s: RetentionSettings): { kind: RetentionKind; limit?: number; run: (db: DbClient) => Promise<Batch> }[] {
  const ipCutoff = days(s.playerIpRetainDays);
  return [
    {
      kind: "player_ip",
      // A player a write holds is left for the next batch or sweep (its write may set the address anew).
      run: (db) =>
        counted(db.$executeRaw`
        UPDATE players p SET ip = '' FROM (
          SELECT id FROM players WHERE ip <> '' AND "ipSetAt" < ${ipCutoff} ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due
         WHERE p.id = due.id`),
    },
    {
      kind: "audit_ip",
      // Every entry past the address retention is marked (retention 1); those naming an address are counted.
      run: async (db) => {
        const [row] = await db.$queryRaw<{ marked: number; had: number }[]>`
          WITH due AS (
            SELECT id, (jsonb_typeof(changes) = 'object' AND changes ? 'ip') AS "inChanges", (jsonb_typeof(before) = 'object' AND before ? 'ip') AS "inBefore"
              FROM audit_log WHERE retention = 0 AND at < ${ipCutoff} ORDER BY at LIMIT ${BATCH}),
          marked AS (
            UPDATE audit_log a
               SET changes = CASE WHEN due."inChanges" THEN jsonb_set(a.changes, '{ip}', 'null') ELSE a.changes END,
                   before = CASE WHEN due."inBefore" THEN jsonb_set(a.before, '{ip}', 'null') ELSE a.before END,
                   retention = 1
              FROM due WHERE a.id = due.id
            RETURNING due."inChanges" OR due."inBefore" AS had)
          SELECT count(*)::int AS marked, (count(*) FILTER (WHERE had))::int AS had FROM marked`;
        return { changed: row?.marked ?? 0, removed: row?.had ?? 0 };
      },
    },
    {
      kind: "audit_values",
      run: (db) =>
        counted(db.$executeRaw`
        UPDATE audit_log a SET changes = ${nulled("a.changes")}, before = ${nulled("a.before")}, retention = 2 FROM (
          SELECT id FROM audit_log WHERE retention < 2 AND at < ${days(s.auditValuesRetainDays)} ORDER BY at LIMIT ${BATCH}) due
         WHERE a.id = due.id`),
    },
    {
      kind: "outbox_events",
      run: async (db) => ({ changed: 0, removed: await pruneOutbox(db, s.webhooksRetainDays) }),
    },
    {
      kind: "idempotency_records",
      run: (db) =>
        counted(db.$executeRaw`
        DELETE FROM idempotency_keys WHERE ("apiUserId", key) IN (
          SELECT "apiUserId", key FROM idempotency_keys WHERE "createdAt" <= now() - ${s.idempotencyRetainHours} * interval '1 hour' LIMIT ${BATCH})`),
    },
    {
      // Past days, weeks and months (not seasons), with their boards: `key=` then answers "not on record".
      kind: "leaderboard_periods",
      limit: PERIODS_BATCH,
      run: (db) =>
        counted(db.$executeRaw`
        DELETE FROM leaderboard_periods WHERE id IN (
          SELECT id FROM leaderboard_periods WHERE kind <> 'season' AND "endsAt" < ${days(s.leaderboardRetainDays)} ORDER BY "endsAt" LIMIT ${PERIODS_BATCH})`),
    },
  ];
}

/**
 * Deletes the events older than WEBHOOKS_RETAIN_DAYS none of whose deliveries is pending, with their
 * deliveries (ON DELETE CASCADE). Only from the outbox's start, in the event stream's order (up to the
 * first event still kept): while an event is in the outbox, every later one is too, which is how a
 * stream knows it can resume after it (stream/resume.ts), and answers 410 when it cannot.
 */
export function pruneOutbox(db: DbClient, retainDays: number): Promise<number> {
  const cutoff = days(retainDays);
  return db.$executeRaw`
    WITH kept AS (
      SELECT k."writtenBy", k.id FROM webhook_events k
       WHERE k."createdAt" >= ${cutoff}
          OR EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d."eventId" = k.id AND d.status = 'pending')
       ORDER BY k."writtenBy", k.id LIMIT 1)
    DELETE FROM webhook_events e
     WHERE e."createdAt" < ${cutoff}
       AND NOT EXISTS (SELECT 1 FROM kept WHERE (kept."writtenBy", kept.id) <= (e."writtenBy", e.id))`;
}

/** Names this process in the lease. */
export const sweeperName = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * Sweeps once, unless another instance is sweeping (busy), writes are frozen (frozen), or, unless
 * `force`, a sweep ended less than SWEEP_EVERY_MS ago (not_due). `stopping` is asked after each batch.
 */
export async function sweepRetention(
  db: DbClient,
  settings: RetentionSettings,
  holder: string,
  options: { force?: boolean; stopping?: () => boolean } = {},
): Promise<SweepResult> {
  const freeze = await writeFreeze(db);
  if (freeze) return { result: "frozen", detail: `writes are frozen since ${freeze.since} (${freeze.reason}): nothing removed; thaw, then sweep` };
  const taken = await takeLease(db, holder, options.force ?? false);
  if (taken !== "taken") return taken;
  const started = performance.now();
  const removed = zero();
  let ended = false;
  try {
    for (const step of steps(settings)) {
      for (;;) {
        const batch = await step.run(db);
        removed[step.kind] += batch.removed;
        if (batch.changed < (step.limit ?? BATCH)) break;
        if (options.stopping?.()) return { result: "busy", detail: "this instance is stopping: the next sweep goes on from here" };
        if (!(await renewLease(db, holder))) return { result: "busy", detail: "the sweep's lease passed to another instance: it goes on from here" };
      }
    }
    ended = true;
  } catch (error) {
    if (frozenWrite(error)) return { result: "frozen", detail: "writes were frozen during the sweep: it stopped; thaw, then sweep" };
    throw error;
  } finally {
    await releaseLease(db, holder, ended ? removed : undefined);
  }
  return { result: "done", removed, seconds: (performance.now() - started) / 1000 };
}

async function takeLease(db: DbClient, holder: string, force: boolean): Promise<"taken" | SweepResult> {
  const due = force
    ? Prisma.sql`true`
    : Prisma.sql`(s.value->>'finishedAt') IS NULL OR (s.value->>'finishedAt')::timestamptz <= now() - ${SWEEP_EVERY_MS} * interval '1 millisecond'`;
  const lease = Prisma.sql`jsonb_build_object('holder', ${holder}::text, 'leaseUntil', now() + ${LEASE_MS} * interval '1 millisecond')`;
  const rows = await db.$queryRaw<{ taken: boolean }[]>`
    INSERT INTO service_state AS s ("name", "value") VALUES ('retention', ${lease})
    ON CONFLICT ("name") DO UPDATE SET "value" = s."value" || EXCLUDED."value", "setAt" = now()
     WHERE (s.value->>'leaseUntil')::timestamptz < now() AND (${due})
    RETURNING true AS taken`;
  if (rows.length > 0) return "taken";
  const last = await lastSweep(db);
  if (last.sweeping) return { result: "busy", detail: `another instance is sweeping (${last.sweeping})` };
  return { result: "not_due", detail: `the last sweep ended at ${last.finishedAt?.toISOString() ?? "?"}, less than an hour ago` };
}

async function renewLease(db: DbClient, holder: string): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE service_state SET "value" = "value" || jsonb_build_object('leaseUntil', now() + ${LEASE_MS} * interval '1 millisecond')
     WHERE "name" = 'retention' AND "value"->>'holder' = ${holder}`;
  return n === 1;
}

async function releaseLease(db: DbClient, holder: string, removed: Removed | undefined): Promise<void> {
  const ended = removed ? Prisma.sql`, 'finishedAt', now(), 'removed', ${JSON.stringify(removed)}::jsonb, 'sweptBy', ${holder}::text` : Prisma.empty;
  await db.$executeRaw`
    UPDATE service_state SET "value" = "value" || jsonb_build_object('leaseUntil', now() - interval '1 millisecond' ${ended})
     WHERE "name" = 'retention' AND "value"->>'holder' = ${holder}`;
}

/** What service_state says of the sweeps: the last that ended, and whether one runs. */
export async function lastSweep(db: Pick<DbClient, "$queryRaw">): Promise<LastSweep> {
  const [row] = await db.$queryRaw<{ finishedAt: Date | null; sweptBy: string | null; removed: Removed | null; sweeping: string | null }[]>`
    SELECT (value->>'finishedAt')::timestamptz AS "finishedAt", value->>'sweptBy' AS "sweptBy", value->'removed' AS removed,
           CASE WHEN (value->>'leaseUntil')::timestamptz >= now() THEN value->>'holder' END AS sweeping
      FROM service_state WHERE "name" = 'retention'`;
  return {
    finishedAt: row?.finishedAt ?? undefined,
    sweptBy: row?.sweptBy ?? undefined,
    removed: row?.removed ?? undefined,
    sweeping: row?.sweeping ?? undefined,
  };
}
