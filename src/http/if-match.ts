import { z } from "zod";

/**
 * If-Match (RFC 9110 §13.1.1): `*`, or a list of entity tags. It is compared
 * strongly: a weak tag (`W/"…"`) never matches, so only its strong tags are
 * kept. A value that is neither is a 400 rather than ignored: a client that
 * asked for a conditional write must not get an unconditional one.
 */
export type IfMatch = { any: true } | { any: false; strongTags: string[] };

const MALFORMED = 'expected * or a comma-separated list of quoted entity tags, such as "cosmetic-3-v2"';

/** One list element: optional `W/`, then a quoted tag of etagc characters (no DQUOTE, no control). */
const ENTITY_TAG = /[ \t]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|$)/y;

export function parseIfMatch(raw: string): IfMatch | undefined {
  const value = raw.trim();
  if (value === "*") return { any: true };
  const strongTags: string[] = [];
  let seen = 0;
  ENTITY_TAG.lastIndex = 0;
  for (;;) {
    // Empty list elements (`"a", , "b"`) are allowed by the list syntax.
    while (/[ \t,]/.test(value[ENTITY_TAG.lastIndex] ?? "")) ENTITY_TAG.lastIndex++;
    if (ENTITY_TAG.lastIndex >= value.length) break;
    const match = ENTITY_TAG.exec(value);
    if (!match) return undefined;
    seen++;
    if (!match[1]) strongTags.push(match[2]!);
  }
  return seen === 0 ? undefined : { any: false, strongTags };
}

export const ifMatchHeader = z
  .string()
  .transform((raw, ctx): IfMatch => {
    const parsed = parseIfMatch(raw);
    if (!parsed) {
      ctx.addIssue({ code: "custom", message: MALFORMED });
      return z.NEVER;
    }
    return parsed;
  })
  .meta({
    description:
      "Write only if the record is still at this version: the ETag of a previous read. `*` matches any existing " +
      "record; several tags may be listed; weak tags (W/) never match. Otherwise 412 and nothing is written.",
    example: '"cosmetic-3-v2"',
  });
