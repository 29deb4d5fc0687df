import { z } from "zod";
import { ApiError } from "../../core/errors.js";
import { queryInt } from "../../fields/query-params.js";
import { id } from "../../fields/rules.js";
import { defineRoute } from "../../http/route.js";
import { aroundOf, rankOf, topOf } from "../../leaderboards/boards.js";
import { boardAnswer, boardOf, boardQuery, boardTag, entrySchema, periodSchema } from "./board-query.js";

/** The groups that read the statistics today (get-all-infectes). */
const CALLERS = ["A", "B", "D"] as const;
export const MAX_TOP = 100;
export const MAX_AROUND = 50;

const ORDER =
  "Highest first; ties share a rank (1, 2, 2, 4) and are ordered by player id. A period's board holds the players whose statistics changed " +
  "in it, with what they gained.";
const NO_PERIOD = "The current day, week or month is not made yet (each instance makes it at start and every minute): `The current week not found`.";
const NO_ROW = `The player has no statistics, or (for a period) none changed in it: \`Player 7 has no kill on this board\`. ${NO_PERIOD}`;
const notOnBoard = (playerId: number, stat: string) => new ApiError("NOT_FOUND", `Player ${playerId} has no ${stat} on this board`);

const board = z.strictObject({ stat: boardQuery.stat, period: periodSchema });

export const leaderboardRoutes = [
  defineRoute({
    method: "GET",
    path: "/infecte2/get-leaderboard",
    summary: "The top players by one statistic, all-time or for a period",
    description: `The first \`limit\` players (default 10, at most ${MAX_TOP}) of the board. ${ORDER} ETag: the board changes when a statistic or a pseudo does, or the period ends.`,
    callers: [...CALLERS],
    query: z.strictObject({
      ...boardQuery,
      limit: queryInt(z.number().int().min(1, "expected 1 or more").max(MAX_TOP, `expected at most ${MAX_TOP}`))
        .optional()
        .meta({ description: "How many", example: 10 }),
    }),
    response: board.extend({ entries: z.array(entrySchema) }).meta({ id: "Leaderboard" }),
    errors: { 404: NO_PERIOD },
    etag: ({ query }, { db }) => boardTag(db, query, `top${query.limit ?? 10}`),
    async handler({ query }, { db }) {
      const found = await boardOf(db, query);
      return { ...boardAnswer(found), entries: await topOf(db, found.source, found.stat, query.limit ?? 10) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/infecte2/get-leaderboard-rank",
    summary: "One player's rank and value on a board",
    description: `The player's place on the board (${ORDER})`,
    callers: [...CALLERS],
    query: z.strictObject({ ...boardQuery, playerId: queryInt(id).meta({ description: "The player", example: 7 }) }),
    response: board.extend({ entry: entrySchema }).meta({ id: "LeaderboardRank" }),
    errors: { 404: NO_ROW },
    etag: ({ query }, { db }) => boardTag(db, query, `rank${query.playerId}`),
    async handler({ query }, { db }) {
      const found = await boardOf(db, query);
      const entry = await rankOf(db, found.source, found.stat, query.playerId);
      if (!entry) throw notOnBoard(query.playerId, found.stat);
      return { ...boardAnswer(found), entry };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/infecte2/get-leaderboard-around",
    summary: "The players just above and below one player on a board",
    description: `The player with up to \`k\` players above and \`k\` below (default 5, at most ${MAX_AROUND}), in the board's order (${ORDER})`,
    callers: [...CALLERS],
    query: z.strictObject({
      ...boardQuery,
      playerId: queryInt(id).meta({ description: "The player", example: 7 }),
      k: queryInt(z.number().int().min(0, "expected 0 or more").max(MAX_AROUND, `expected at most ${MAX_AROUND}`))
        .optional()
        .meta({ description: "Players on each side", example: 5 }),
    }),
    response: board.extend({ entries: z.array(entrySchema) }).meta({ id: "LeaderboardAround" }),
    errors: { 404: NO_ROW },
    etag: ({ query }, { db }) => boardTag(db, query, `around${query.playerId}.${query.k ?? 5}`),
    async handler({ query }, { db }) {
      const found = await boardOf(db, query);
      const entries = await aroundOf(db, found.source, found.stat, query.playerId, query.k ?? 5);
      if (!entries) throw notOnBoard(query.playerId, found.stat);
      return { ...boardAnswer(found), entries };
    },
  }),
];
