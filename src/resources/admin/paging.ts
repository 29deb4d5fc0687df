import { z } from "zod";
import { queryInt } from "../../fields/query-params.js";

/** What a cursor the admin routes never gave gets (after `cursor: `). */
export const NOT_A_CURSOR = "not a cursor this API gave (take it from nextCursor or the Link header)";

/** How the admin routes page their lists (the audit log, webhook deliveries): newest first, by an opaque cursor. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** The query parameters of a page of `what` (as "Entries"). */
export const pageQuery = (what: string) => ({
  limit: queryInt(z.int().min(1, "expected 1 or more").max(MAX_LIMIT, `expected at most ${MAX_LIMIT}`))
    .optional()
    .meta({ description: `${what} per page, 1 to ${MAX_LIMIT}`, example: DEFAULT_LIMIT }),
  cursor: z.string("expected a single value").max(64, NOT_A_CURSOR).optional().meta({ description: "From nextCursor or the Link header of the page before" }),
});

/** The answer's field naming the next page. */
export const nextCursorField = z.string().nullable().meta({ description: "The `cursor` of the next page; null on the last page" });
