import { INT32_MAX } from "../../fields/rules.js";
import type { Cosmetic } from "../../generated/prisma/client.js";
import type { IfMatch } from "../../http/if-match.js";

/** The strong ETag of one cosmetic at one version (quoted by the registrar). */
export function cosmeticEtag(c: Pick<Cosmetic, "id" | "version">): string {
  return `cosmetic-${c.id}-v${c.version}`;
}

/**
 * The versions of cosmetic `id` that If-Match names: undefined for `*` (any
 * version). Strong comparison is exact: a tag of another cosmetic, or written
 * differently (`v01`), names none.
 */
export function versionsNamed(ifMatch: IfMatch, id: number): number[] | undefined {
  if (ifMatch.any) return undefined;
  return ifMatch.strongTags.flatMap((tag) => {
    const m = /^cosmetic-([1-9]\d{0,9})-v([1-9]\d{0,9})$/.exec(tag);
    if (!m || Number(m[1]) !== id || Number(m[2]) > INT32_MAX) return [];
    return [Number(m[2])];
  });
}
