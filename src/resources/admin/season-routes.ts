import { z } from "zod";
import { text } from "../../fields/rules.js";
import { timestamp } from "../../fields/timestamp.js";
import { defineRoute } from "../../http/route.js";
import { endSeason, listSeasons, periodView, SEASON_ENDED_EVENT, SEASON_NAME, SEASON_NAME_RULE, startSeason } from "../../leaderboards/periods.js";
import { periodSchema } from "../leaderboard/board-query.js";
import { ADMIN_CALLERS } from "./callers.js";

/** A season's name: what GET /infecte2/get-leaderboard?period=season&season= takes. */
const seasonName = text(64).regex(SEASON_NAME, SEASON_NAME_RULE).meta({ description: "The season's name", example: "winter-2026" });

const season = periodSchema.unwrap();

export const seasonRoutes = [
  defineRoute({
    method: "POST",
    path: "/admin/seasons/start",
    summary: "Start a leaderboard season: its boards count what each player gains from its start",
    description:
      "Now, or at `startsAt` (not in the past: gains are counted from the start); `endsAt` may be set now or by /admin/seasons/end. " +
      `Its end is announced as \`${SEASON_ENDED_EVENT}\` with the final top of every statistic. A name is used once. The admin routes' callers.`,
    callers: ADMIN_CALLERS,
    body: z
      .strictObject({ name: seasonName, startsAt: timestamp.optional(), endsAt: timestamp.optional() })
      .meta({ example: { name: "winter-2026", endsAt: "2027-03-01T00:00:00Z" } }),
    response: season,
    successStatus: 201,
    errors: { 409: "A season of this name exists: `Season 'winter-2026' already exists (it starts …): nothing changed`." },
    async handler({ body }, { db, source }) {
      return periodView(await startSeason(db, body, source));
    },
  }),
  defineRoute({
    method: "POST",
    path: "/admin/seasons/end",
    summary: "End a leaderboard season, now or at a given moment",
    description: `Its boards stop counting at \`endsAt\` (default now); then \`${SEASON_ENDED_EVENT}\` announces the final top. A season ends once, after it began. The admin routes' callers.`,
    callers: ADMIN_CALLERS,
    body: z.strictObject({ name: seasonName, endsAt: timestamp.optional() }).meta({ example: { name: "winter-2026" } }),
    response: season,
    successStatus: 200,
    errors: { 404: "No season of this name: `Season not found`.", 409: "The season has ended already: `Season 'winter-2026' ended at …: nothing changed`." },
    async handler({ body }, { db, source }) {
      return periodView(await endSeason(db, body, source));
    },
  }),
  defineRoute({
    method: "GET",
    path: "/admin/seasons",
    summary: "List the leaderboard seasons, newest first",
    description: "Every season started, with its start, end and whether it has ended. The admin routes' callers.",
    callers: ADMIN_CALLERS,
    query: z.strictObject({}),
    response: z.strictObject({ seasons: z.array(season) }),
    async handler(_input, { db }) {
      return { seasons: (await listSeasons(db)).map(periodView) };
    },
  }),
];
