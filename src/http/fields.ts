import { z } from "zod";

/**
 * Field rules shared by every resource. Numbers the spec calls ids, credits,
 * prices, points or counters are integers that fit PostgreSQL's `integer`.
 */
export const INT32_MAX = 2_147_483_647;

export const id = z.int("expected an integer").min(1, "expected a positive integer").max(INT32_MAX, `expected at most ${INT32_MAX}`);
export const count = z.int("expected an integer").min(0, "expected 0 or more").max(INT32_MAX, `expected at most ${INT32_MAX}`);
export const int32 = z.int("expected an integer").min(-INT32_MAX - 1).max(INT32_MAX, `expected at most ${INT32_MAX}`);
export const bool = z.boolean("expected true or false");

/**
 * Text of at most `max` characters. PostgreSQL text cannot hold the NUL
 * character, and a lone UTF-16 surrogate would be stored as U+FFFD: both are
 * refused rather than lost.
 */
export const text = (max: number, min = 1) =>
  z
    .string("expected a string")
    .min(min, min === 1 ? "expected a non-empty string" : `expected at least ${min} characters`)
    .max(max, `expected at most ${max} characters`)
    .refine((s) => !s.includes("\u0000"), "must not contain the NUL character (\\u0000)")
    .refine((s) => s.isWellFormed(), "must be well-formed Unicode (no lone surrogate)");

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-](\d{2}):(\d{2}))$/;

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

const FIRST_MOMENT = new Date("0001-01-01T00:00:00Z");
const LAST_MOMENT = new Date("9999-12-31T23:59:59Z");

/** What a request timestamp accepts, as the 400 says it. */
const TIMESTAMP_FORMS = "ISO 8601 date-time with Z or an offset, e.g. 2026-01-31T18:00:00Z, in the years 0001 to 9999";

export const timestamp = z
  .string("expected an ISO 8601 date-time string")
  .transform((raw, ctx) => {
    const date = parseTimestamp(raw);
    if (!date) {
      ctx.addIssue({ code: "custom", message: `expected an ${TIMESTAMP_FORMS}` });
      return z.NEVER;
    }
    return date;
  })
  .meta({
    description:
      `An ${TIMESTAMP_FORMS}. An offset such as +01:00 is converted to UTC; fractions of a second are accepted ` +
      "and dropped (stored in whole seconds). A date without a time, or a time without Z or an offset, is a 400.",
    override: { type: "string", format: "date-time", pattern: ISO_DATE_TIME.source },
    example: "2026-11-22T10:15:30+01:00",
  });

/** The one timestamp format of every response: yyyy-mm-ddThh:mm:ssZ. */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * A query parameter holding an integer. Query values arrive as text; a
 * repeated parameter arrives as an array and is refused. Documented as the
 * integer it must be (a generated client sends a number), with the range of
 * `schema`, rather than as the text it travels as.
 */
export const queryInt = (schema: z.ZodNumber) =>
  z
    .string("expected a single value")
    .regex(/^-?\d{1,10}$/, "expected an integer")
    .transform(Number)
    .pipe(schema)
    .meta({
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        delete jsonSchema.pattern;
        Object.assign(jsonSchema, { type: "integer", format: "int32", minimum: schema.minValue, maximum: schema.maxValue });
      },
    });

export const queryText = (max: number) => z.string("expected a single value").pipe(text(max));

/**
 * A nullable text field of a PATCH body: JSON null or the string "null"
 * clears it (the spec's clients send "null").
 */
export const clearableText = (max: number) =>
  z
    .union([text(max, 0), z.null()], { error: "expected a string or null" })
    .transform((v) => (v === "null" ? null : v));

/** A PATCH body must change something besides the record's id. */
export function requireAChange(body: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (Object.keys(body).every((k) => k === "id" || body[k] === undefined)) {
    ctx.addIssue({ code: "custom", message: "expected at least one field to change besides id", path: [] });
  }
}

/** Output schemas: the JSON the API writes, for the OpenAPI document and the contract tests. */
export const out = {
  int32: (description: string) => z.int().min(-INT32_MAX - 1).max(INT32_MAX).meta({ description }),
  id: (description: string) => z.int().min(1).max(INT32_MAX).meta({ description }),
  count: (description: string) => z.int().min(0).max(INT32_MAX).meta({ description }),
  bool: (description: string) => z.boolean().meta({ description }),
  text: (description: string, example?: string) => z.string().meta(example === undefined ? { description } : { description, example }),
  nullableText: (description: string, example?: string) =>
    z.string().nullable().meta(example === undefined ? { description } : { description, example }),
  timestamp: (description: string) =>
    z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
      .meta({ description: `${description} (UTC, yyyy-mm-ddThh:mm:ssZ)`, format: "date-time", example: "2026-11-22T09:15:30Z" }),
};
