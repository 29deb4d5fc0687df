import type { AuditSource } from "../audit/audit.js";
import { ApiError } from "../core/errors.js";
import type { Database } from "../db/database.js";
import { parseTimestamp } from "../fields/timestamp.js";
import { endSeason, listSeasons, type Period, periodView, SEASON_NAME, SEASON_NAME_RULE, startSeason } from "../leaderboards/periods.js";
import { parse, printable, table, UsageError } from "./args.js";

export const SEASON_USAGE = `  season start <name> [--starts-at WHEN] [--ends-at WHEN]
                                         start a leaderboard season now or at WHEN (ISO 8601); its boards
                                         count what players gain from then
  season end <name> [--at WHEN]          end it now or at WHEN; its final top is announced (season.ended)
  season list                            the seasons, newest first`;

type Io = { stdout: (text: string) => void; stderr: (text: string) => void };

const moment = (flag: string, raw: string | undefined) => {
  if (raw === undefined) return undefined;
  const date = parseTimestamp(raw);
  if (!date) throw new ApiError("VALIDATION", `Invalid ${flag} '${raw}': expected an ISO 8601 date-time with Z or an offset`);
  return date;
};
const named = (name: string | undefined) => {
  if (name === undefined) throw new UsageError("name the season");
  if (!SEASON_NAME.test(name)) throw new ApiError("VALIDATION", `Invalid season name '${name}': ${SEASON_NAME_RULE}`);
  return name;
};
const line = (p: Period) => {
  const v = periodView(p);
  return `Season '${printable(v.key)}': from ${v.startsAt}${v.endsAt ? ` to ${v.endsAt}` : ", no end set"}${v.ended ? " (ended)" : ""}.\n`;
};

/** `season start | end | list`: the seasons of src/leaderboards/periods.ts, audited as the admin routes are. */
export async function seasonCommand(args: string[], db: Database, by: AuditSource, io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { "starts-at": { type: "string" }, "ends-at": { type: "string" }, at: { type: "string" } });
  if (positionals.length > 1) throw new UsageError(`season ${sub ?? ""} takes one name`);
  switch (sub) {
    case "start": {
      const input = { name: named(positionals[0]), startsAt: moment("--starts-at", values["starts-at"]), endsAt: moment("--ends-at", values["ends-at"]) };
      const season = await db.prisma.$transaction((tx) =>
        startSeason(tx, { name: input.name, ...(input.startsAt && { startsAt: input.startsAt }), ...(input.endsAt && { endsAt: input.endsAt }) }, by),
      );
      io.stdout(`Started. ${line(season)}`);
      return 0;
    }
    case "end": {
      const endsAt = moment("--at", values.at);
      const season = await db.prisma.$transaction((tx) => endSeason(tx, { name: named(positionals[0]), ...(endsAt && { endsAt }) }, by));
      io.stdout(`Ended. ${line(season)}`);
      return 0;
    }
    case "list": {
      const seasons = (await listSeasons(db.prisma)).map(periodView);
      const rows = seasons.map((s) => ({ name: s.key, starts: s.startsAt, ends: s.endsAt ?? "", ended: s.ended ? "yes" : "no" }));
      io.stdout(rows.length ? table(rows) : "No season has been started.\n");
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? "season takes start, end or list" : `Unknown season command '${sub}'`);
  }
}
