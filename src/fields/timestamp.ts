import { z } from "zod";

/**
 * The one timestamp format of the API's answers, yyyy-mm-ddThh:mm:ssZ (UTC,
 * whole seconds), written here three ways: in TypeScript, as PostgreSQL's
 * to_char pattern, and as the pattern the OpenAPI document declares.
 */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** The same text made by PostgreSQL, for JSON it builds itself. */
export function timestampSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
}

export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-](\d{2}):(\d{2}))$/;

const FIRST_MOMENT = new Date("0001-01-01T00:00:00Z");
const LAST_MOMENT = new Date("9999-12-31T23:59:59Z");

/**
 * Parses an ISO 8601 date-time with `Z` or an offset, with or without
 * fractions, into a Date truncated to whole seconds (the API speaks whole
 * seconds). Impossible dates (Feb 30, hour 24) are refused rather than rolled
 * over as `new Date()` would, and so is any moment outside the years 0001 to
 * 9999 in UTC, which the response format cannot write.
 */
export function parseTimestamp(raw: string): Date | undefined {
  const m = ISO_DATE_TIME.exec(raw);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== "Z") {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[8]!.startsWith("-") ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC maps years 0-99 to 1900-1999: set the year on its own.
  const local = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  local.setUTCFullYear(year);
  const date = new Date(local.getTime() - offsetMinutes * 60_000);
  if (Number.isNaN(date.getTime()) || date < FIRST_MOMENT || date > LAST_MOMENT) return undefined;
  return date;
}

/** What a request timestamp accepts, as the 400 says it. */
const TIMESTAMP_FORMS = "ISO 8601 date-time with Z or an offset, e.g. 2026-01-31T18:00:00Z, in the years 0001 to 9999";

/** A timestamp as text, parsed by `parse` (undefined: not one), or a 400 saying the forms accepted. */
const timestampText = (parse: (raw: string) => Date | undefined, single = "expected an ISO 8601 date-time string") =>
  z.string(single).transform((raw, ctx) => {
    const date = parse(raw);
    if (!date) {
      ctx.addIssue({ code: "custom", message: `expected an ${TIMESTAMP_FORMS}` });
      return z.NEVER;
    }
    return date;
  });

/** A timestamp sent by a client or an import file, parsed to a Date. */
export const timestamp = timestampText(parseTimestamp).meta({
  description:
    `An ${TIMESTAMP_FORMS}. An offset such as +01:00 is converted to UTC; fractions of a second are accepted ` +
    "and dropped (stored in whole seconds). A date without a time, or a time without Z or an offset, is a 400.",
  override: { type: "string", format: "date-time", pattern: ISO_DATE_TIME.source },
  example: "2026-11-22T10:15:30+01:00",
});

/** A moment sent to the millisecond (a stream's `startAt`): as `timestamp`, its fraction kept to the millisecond. */
export const instant = timestampText((raw) => {
  const date = parseTimestamp(raw);
  return date && new Date(date.getTime() + Number((ISO_DATE_TIME.exec(raw)![7] ?? "").padEnd(3, "0").slice(0, 3)));
}, "expected a single value").meta({ override: { type: "string", format: "date-time", pattern: ISO_DATE_TIME.source } });
