import { z } from "zod";
import { errors } from "../../core/errors.js";
import type { ReadClient } from "../../db/client.js";
import { tableVersion } from "../../db/versions.js";
import { infectedStats } from "../../entities/infected.js";
import { player } from "../../entities/player.js";
import { queryText } from "../../fields/query-params.js";
import { type BoardSource, STATISTICS, type Statistic } from "../../leaderboards/boards.js";
import { currentPeriod, listSeasons, PERIOD_KINDS, type Period, periodByKey, periodView } from "../../leaderboards/periods.js";

/** The query every board route takes: which statistic, over which period. */
export const boardQuery = {
  stat: z
    .enum(STATISTICS as [Statistic, ...Statistic[]], { error: `expected one of ${STATISTICS.join(", ")}` })
    .meta({ description: "The statistic ranked", example: "kill" }),
  period: z
    .enum(["all", ...PERIOD_KINDS, "season"], { error: `expected one of all, ${PERIOD_KINDS.join(", ")}, season` })
    .optional()
    .meta({
      description:
        "all (the default): the running totals; day, week, month: what each player gained in the current one (LEADERBOARD_TIME_ZONE), or in the one `key` names; season: in the season `season` names",
      example: "week",
    }),
  key: queryText(64).optional().meta({ description: "A past day, week or month: 2026-12-03, 2026-W49, 2026-12; absent: the current one", example: "2026-W48" }),
  season: queryText(64).optional().meta({ description: "The season's name, with period=season", example: "winter-2026" }),
};

export const periodSchema = z
  .strictObject({
    kind: z.enum([...PERIOD_KINDS, "season"]),
    key: z.string().meta({ description: "2026-12-03, 2026-W49, 2026-12, or the season's name", example: "2026-W49" }),
    startsAt: z.string().meta({ description: "When it begins (ISO 8601, UTC)", example: "2026-11-30T00:00:00.000Z" }),
    endsAt: z.string().nullable().meta({ description: "When it ends; null: a season not ended yet", example: "2026-12-07T00:00:00.000Z" }),
    countedFrom: z
      .string()
      .meta({ description: "When its gains began to be counted: its start, or later when the service made the period late (after downtime)" }),
    ended: z.boolean().meta({ description: "Whether it has ended: its board is final" }),
  })
  .nullable()
  .meta({ id: "LeaderboardPeriod", description: "The period ranked; null for the all-time board" });

export const entrySchema = z
  .strictObject({
    rank: z.number().int().meta({ description: "1 for the highest value; ties share a rank (1, 2, 2, 4)", example: 1 }),
    playerId: z.number().int().meta({ example: 7 }),
    pseudo: z.string().meta({ example: "Steve" }),
    value: z.number().int().meta({ description: "The statistic (all-time), or what the player gained in the period", example: 42 }),
  })
  .meta({ id: "LeaderboardEntry" });

export interface Board {
  stat: Statistic;
  source: BoardSource;
  period: Period | null;
}

type BoardInput = { stat: Statistic; period?: string | undefined; key?: string | undefined; season?: string | undefined };

/** Per request (its parsed query), the board resolved for its ETag, then for its answer: one lookup, one period for both. */
const resolved = new WeakMap<BoardInput, Promise<Board>>();

/** The board a query names; a 400 naming what is accepted when it names none. */
export function boardOf(db: ReadClient, query: BoardInput): Promise<Board> {
  let board = resolved.get(query);
  if (!board) resolved.set(query, (board = resolveBoard(db, query)));
  return board;
}

async function resolveBoard(db: ReadClient, query: BoardInput): Promise<Board> {
  const kind = query.period ?? "all";
  if (query.season !== undefined && kind !== "season") throw errors.validation("season: only with period=season");
  if (query.key !== undefined && (kind === "all" || kind === "season")) throw errors.validation("key: only with period=day, week or month");
  if (kind === "all") return { stat: query.stat, source: { kind: "all" }, period: null };
  let period: Period | undefined;
  if (kind === "season") {
    if (query.season === undefined) throw errors.validation("season: required with period=season (GET /api/admin/seasons lists them)");
    period = await periodByKey(db, "season", query.season);
    if (!period) {
      const names = (await listSeasons(db)).slice(0, 20).map((s) => s.key);
      throw errors.validation(`season: no season '${query.season}'; ${names.length ? `the seasons: ${names.join(", ")}` : "none has been started"}`);
    }
    if (period.startsAt.getTime() > Date.now())
      throw errors.validation(`season: '${query.season}' has not begun yet (it begins ${period.startsAt.toISOString()})`);
  } else {
    const periodKind = kind as (typeof PERIOD_KINDS)[number];
    period = query.key === undefined ? await currentPeriod(db, periodKind) : await periodByKey(db, periodKind, query.key);
    if (!period && query.key !== undefined) throw errors.validation(`key: no ${kind} '${query.key}' on record (${FORMATS[periodKind]})`);
    if (!period) throw errors.notFound(`The current ${kind}`);
    if (period.startsAt.getTime() > Date.now()) throw errors.validation(`key: the ${kind} '${query.key}' has not begun yet`);
  }
  return { stat: query.stat, source: { kind: "period", periodId: period.id }, period };
}

const FORMATS = { day: "a day is 2026-12-03", week: "a week is 2026-W49 (ISO)", month: "a month is 2026-12" } as const;

/** The board's ETag: the statistics' and the players' versions (names are answered), the period and whether it has ended. */
export async function boardTag(db: ReadClient, query: BoardInput, rest: string): Promise<string> {
  const board = await boardOf(db, query);
  const [stats, players] = [await tableVersion(db, infectedStats), await tableVersion(db, player)];
  const p = board.period;
  const period = p ? `${p.id}.${p.endsAt?.getTime() ?? "open"}.${periodView(p).ended ? "e" : "o"}` : "all";
  return `lb-${stats}-${players}-${period}-${board.stat}-${rest}`;
}

export const boardAnswer = (board: Board) => ({ stat: board.stat, period: board.period ? periodView(board.period) : null });
