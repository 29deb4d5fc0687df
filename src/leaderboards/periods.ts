import { type AuditSource, recordAudit } from "../audit/audit.js";
import { errors } from "../core/errors.js";
import type { DbClient, ReadClient } from "../db/client.js";
import type { EventType } from "../events/catalogue.js";
import { recordEvent } from "../events/record.js";
import { Prisma } from "../generated/prisma/client.js";
import { type BoardEntry, STATISTICS, type Statistic, topOf } from "./boards.js";

/**
 * A board's periods (table leaderboard_periods): the day, the week (ISO, from Monday) and the month in
 * LEADERBOARD_TIME_ZONE, which the service makes ahead of time (the current one and the next), and the
 * seasons an admin starts and ends. The database counts each player's gains into every period counting
 * at the moment of the change (a trigger of infected_stats), so a boundary passed while no instance ran
 * loses nothing, provided its period was made before; one made late counts from when it was made
 * (`countedFrom`, which the board answers). Each period's start, and each season's end, is announced
 * once, by whichever instance marks it first.
 */
export const PERIOD_KINDS = ["day", "week", "month"] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number] | "season";

/** A season's name: what GET /infecte2/get-leaderboard?period=season&season= takes (at most 64 characters). */
export const SEASON_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,63}$/u;
export const SEASON_NAME_RULE = "expected 1 to 64 letters, digits, spaces, '.', '_' or '-', beginning with a letter or digit";

/** How many players an announcement names per statistic. */
export const ANNOUNCED_TOP = 10;
export const PERIOD_STARTED_EVENT = "leaderboard.period_started";
export const SEASON_ENDED_EVENT = "season.ended";

export interface Period {
  id: number;
  kind: PeriodKind;
  key: string;
  startsAt: Date;
  endsAt: Date | null;
  countedFrom: Date;
}

const COLUMNS = Prisma.raw(`id, kind, key, "startsAt", "endsAt", "countedFrom"`);

/** Makes the current and the next day, week and month (those that are not made yet); returns how many were made. */
export async function ensurePeriods(db: DbClient, timeZone: string): Promise<number> {
  return db.$executeRaw`
    WITH kinds(kind, unit, format) AS (VALUES ('day', 'day', 'YYYY-MM-DD'), ('week', 'week', 'IYYY-"W"IW'), ('month', 'month', 'YYYY-MM')),
         spans AS (
           SELECT kind, format, s AS local_start, s + ('1 ' || unit)::interval AS local_end
             FROM kinds CROSS JOIN LATERAL (SELECT date_trunc(unit, now() AT TIME ZONE ${timeZone}) AS current) c
             CROSS JOIN LATERAL (VALUES (c.current), (c.current + ('1 ' || unit)::interval)) v(s))
    INSERT INTO leaderboard_periods (kind, key, "startsAt", "endsAt", "countedFrom", "createdBy")
    SELECT kind, to_char(local_start, format), local_start AT TIME ZONE ${timeZone}, local_end AT TIME ZONE ${timeZone},
           greatest(local_start AT TIME ZONE ${timeZone}, now()), 'service'
      FROM spans
    ON CONFLICT (kind, key) DO NOTHING`;
}

/** The top of every statistic, for an announcement: ranks, player ids and values (names come from the board's route). */
async function tops(db: ReadClient, periodId: number): Promise<Record<Statistic, Omit<BoardEntry, "pseudo">[]>> {
  const all = {} as Record<Statistic, Omit<BoardEntry, "pseudo">[]>;
  for (const stat of STATISTICS) {
    all[stat] = (await topOf(db, { kind: "period", periodId }, stat, ANNOUNCED_TOP)).map(({ rank, playerId, value }) => ({ rank, playerId, value }));
  }
  return all;
}

export const periodView = (p: Period) => ({
  kind: p.kind,
  key: p.key,
  startsAt: p.startsAt.toISOString(),
  endsAt: p.endsAt?.toISOString() ?? null,
  countedFrom: p.countedFrom.toISOString(),
  ended: p.endsAt !== null && p.endsAt.getTime() <= Date.now(),
});

/**
 * Marks the periods that have begun and are not announced yet, and the seasons that have ended, and writes
 * their events (`leaderboard.period_started` with the final top of the period of the same kind that ended
 * then; `season.ended` with the season's). Each mark and its event are one statement: no transaction is
 * held across the tops' reads (on the embedded database, that would hold every request), and of instances
 * announcing at once, the one whose statement marks the row writes the event. Returns the events written.
 */
export async function announce(db: DbClient): Promise<number> {
  let written = 0;
  const started = await db.$queryRaw<Period[]>`
    SELECT ${COLUMNS} FROM leaderboard_periods WHERE "announcedAt" IS NULL AND "countedFrom" <= now() ORDER BY "startsAt", id`;
  for (const period of started) {
    const previous =
      period.kind === "season"
        ? undefined
        : (await db.$queryRaw<Period[]>`SELECT ${COLUMNS} FROM leaderboard_periods WHERE kind = ${period.kind} AND "endsAt" = ${period.startsAt}`)[0];
    const data = { ...periodView(period), previous: previous ? { ...periodView(previous), top: await tops(db, previous.id) } : null };
    written += await markAndAnnounce(db, period.id, Prisma.raw(`"announcedAt"`), PERIOD_STARTED_EVENT, data);
  }
  const ended = await db.$queryRaw<Period[]>`
    SELECT ${COLUMNS} FROM leaderboard_periods WHERE kind = 'season' AND "endAnnouncedAt" IS NULL AND "endsAt" <= now() ORDER BY "endsAt", id`;
  for (const season of ended) {
    written += await markAndAnnounce(db, season.id, Prisma.raw(`"endAnnouncedAt"`), SEASON_ENDED_EVENT, {
      ...periodView(season),
      top: await tops(db, season.id),
    });
  }
  return written;
}

/** Sets `mark` on the period if it is still unset and, in the same statement, records the event; 1 if it did. */
async function markAndAnnounce(db: DbClient, id: number, mark: Prisma.Sql, type: EventType, data: Record<string, unknown>): Promise<number> {
  const marked = Prisma.sql`UPDATE leaderboard_periods SET ${mark} = now() WHERE id = ${id}::int AND ${mark} IS NULL RETURNING id`;
  return (await recordEvent(db, type, data, marked)) ? 1 : 0;
}

/** The period of this kind counting now (day, week, month); undefined before the service has made it. */
export async function currentPeriod(db: ReadClient, kind: (typeof PERIOD_KINDS)[number]): Promise<Period | undefined> {
  const [row] = await db.$queryRaw<Period[]>`
    SELECT ${COLUMNS} FROM leaderboard_periods WHERE kind = ${kind} AND "startsAt" <= now() AND now() < "endsAt" ORDER BY "startsAt" DESC LIMIT 1`;
  return row;
}

/** A period by its kind and key (a season by its name). */
export async function periodByKey(db: ReadClient, kind: PeriodKind, key: string): Promise<Period | undefined> {
  const [row] = await db.$queryRaw<Period[]>`SELECT ${COLUMNS} FROM leaderboard_periods WHERE kind = ${kind} AND key = ${key}`;
  return row;
}

/** The seasons, newest start first. */
export async function listSeasons(db: ReadClient): Promise<Period[]> {
  return db.$queryRaw<Period[]>`SELECT ${COLUMNS} FROM leaderboard_periods WHERE kind = 'season' ORDER BY "startsAt" DESC, id DESC`;
}

/** Starts a season now or at `startsAt` (never in the past: gains are counted from its start), audited. */
export async function startSeason(db: DbClient, input: { name: string; startsAt?: Date; endsAt?: Date }, by: AuditSource): Promise<Period> {
  const [row] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
  const now = row!.now;
  const startsAt = input.startsAt ?? now;
  if (startsAt.getTime() < now.getTime() - 60_000)
    throw errors.validation("startsAt: in the past; a season counts gains from its start, so it starts now or later");
  if (input.endsAt && input.endsAt.getTime() <= startsAt.getTime()) throw errors.validation("endsAt: not after startsAt; a season ends after it begins");
  const existing = await periodByKey(db, "season", input.name);
  if (existing) throw errors.conflict(`Season '${input.name}' already exists (it starts ${existing.startsAt.toISOString()}): nothing changed`);
  const [season] = await db.$queryRaw<Period[]>`
    INSERT INTO leaderboard_periods (kind, key, "startsAt", "endsAt", "countedFrom", "createdBy")
    VALUES ('season', ${input.name}, ${startsAt}, ${input.endsAt ?? null}, greatest(${startsAt}::timestamptz, now()), ${by.actor}) RETURNING ${COLUMNS}`;
  const changes = { startsAt: season!.startsAt.toISOString(), endsAt: season!.endsAt?.toISOString() ?? null };
  await recordAudit(db, { ...by, action: "season.start", target: `season:${input.name}`, changes });
  return season!;
}

/** Ends a season now or at `endsAt`, audited; refused when it has ended already or would end before it began. */
export async function endSeason(db: DbClient, input: { name: string; endsAt?: Date }, by: AuditSource): Promise<Period> {
  const season = await periodByKey(db, "season", input.name);
  if (!season) throw errors.notFound("Season");
  if (season.endsAt && season.endsAt.getTime() <= Date.now())
    throw errors.conflict(`Season '${input.name}' ended at ${season.endsAt.toISOString()}: nothing changed`);
  const [row] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
  const endsAt = input.endsAt ?? row!.now;
  if (endsAt.getTime() <= season.startsAt.getTime()) {
    throw errors.validation(`endsAt: not after the season's start (${season.startsAt.toISOString()}); a season ends after it begins`);
  }
  const [ended] = await db.$queryRaw<Period[]>`UPDATE leaderboard_periods SET "endsAt" = ${endsAt} WHERE id = ${season.id} RETURNING ${COLUMNS}`;
  await recordAudit(db, {
    ...by,
    action: "season.end",
    target: `season:${input.name}`,
    changes: { endsAt: endsAt.toISOString() },
    before: { endsAt: season.endsAt?.toISOString() ?? null },
  });
  return ended!;
}
