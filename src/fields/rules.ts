import { z } from "zod";

/**
 * Input rules shared by every resource, the HTTP layer and the operator's
 * import. Numbers the spec calls ids, credits, prices, points or counters are
 * integers that fit PostgreSQL's `integer`.
 */
export const INT32_MAX = 2_147_483_647;

export const id = z.int("expected an integer").min(1, "expected a positive integer").max(INT32_MAX, `expected at most ${INT32_MAX}`);
export const count = z.int("expected an integer").min(0, "expected 0 or more").max(INT32_MAX, `expected at most ${INT32_MAX}`);
export const int32 = z
  .int("expected an integer")
  .min(-INT32_MAX - 1, `expected at least ${-INT32_MAX - 1}`)
  .max(INT32_MAX, `expected at most ${INT32_MAX}`);
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

/**
 * A nullable text field of a PATCH body: JSON null or the string "null"
 * clears it (the spec's clients send "null").
 */
export const clearableText = (max: number, min = 0) =>
  z.union([text(max, min), z.null()], { error: "expected a string or null" }).transform((v) => (v === "null" ? null : v));

/** A PATCH body must change something besides the record's id. */
export function requireAChange(body: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (Object.keys(body).every((k) => k === "id" || body[k] === undefined)) {
    ctx.addIssue({ code: "custom", message: "expected at least one field to change besides id", path: [] });
  }
}
