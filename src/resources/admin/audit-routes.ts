import { z } from "zod";
import { errors } from "../../core/errors.js";
import { queryText } from "../../fields/query-params.js";
import { TIMESTAMP_PATTERN, timestamp } from "../../fields/timestamp.js";
import { defineRoute, Page } from "../../http/route.js";
import { decodeCursor, encodeCursor, readAuditPage } from "./audit-queries.js";
import { ADMIN_CALLERS } from "./callers.js";
import { DEFAULT_LIMIT, MAX_LIMIT, NOT_A_CURSOR, nextCursorField, pageQuery } from "./paging.js";

export const auditEntry = z
  .strictObject({
    id: z.string().meta({ description: "Increasing with each entry", example: "1234" }),
    at: z.string().regex(TIMESTAMP_PATTERN),
    actor: z.string().meta({ description: "The API user, or `cli:<os user>` for the operator's command line", example: "website" }),
    action: z.string().meta({ example: "api_user.rotate" }),
    target: z.string().meta({ example: "api_user:website" }),
    changes: z
      .record(z.string(), z.unknown())
      .meta({ description: "The fields written and their values (after the write); never key material nor webhook secrets", example: { price: 450 } }),
    before: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({
        description:
          "For an update (cosmetic.update, world.update, api_user.rotate, api_user.revoke, api_user.allow_ip): the values " +
          "of the same fields before the write, read in the same statement or transaction. A field of `changes` missing " +
          "here has no value to show (a rotated key). null: not an update, or an entry recorded before this was kept.",
        example: { price: 400 },
      }),
    requestId: z.string().nullable(),
    clientAddress: z.string().nullable(),
  })
  .meta({ id: "AuditEntry" });

const queryTime = z.string("expected a single value").pipe(timestamp);

export const auditRoutes = [
  defineRoute({
    method: "GET",
    path: "/admin/audit",
    summary: "Read the audit log, newest first, filtered and paged",
    description:
      "Filters combine: `actor` (any case), `action` (exact, e.g. `api_user.rotate`), `from` (inclusive) and `to` " +
      `(exclusive). At most \`limit\` entries (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}); when there are more, ` +
      '`nextCursor` and a `Link: <…>; rel="next"` header name the next page (same filters, plus `cursor`). Entries never ' +
      "change, so paging neither repeats nor skips one, even while new entries arrive.",
    callers: ADMIN_CALLERS,
    paged: true,
    query: z.strictObject({
      actor: queryText(64).optional().meta({ description: "Who made the change", example: "website" }),
      action: queryText(64).optional().meta({ description: "What was done", example: "api_user.rotate" }),
      from: queryTime.optional().meta({ description: "Entries at or after this moment (ISO 8601)", example: "2026-11-22T00:00:00Z" }),
      to: queryTime.optional().meta({ description: "Entries before this moment (ISO 8601)", example: "2026-11-23T00:00:00Z" }),
      ...pageQuery("Entries"),
    }),
    response: z.strictObject({
      entries: z.array(auditEntry),
      nextCursor: nextCursorField,
    }),
    async handler({ query }, { db }) {
      if (query.from && query.to && query.from >= query.to) throw errors.validation("to: expected a moment after from");
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      if (query.cursor !== undefined && after === undefined) {
        throw errors.validation(`cursor: ${NOT_A_CURSOR}`);
      }
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows = await readAuditPage(db, query, limit + 1, after);
      const entries = rows.slice(0, limit).map((r) => ({
        ...r,
        changes: JSON.parse(r.changes) as Record<string, unknown>,
        before: r.before === null ? null : (JSON.parse(r.before) as Record<string, unknown>),
      }));
      const nextCursor = rows.length > limit ? encodeCursor(entries.at(-1)!.id) : null;
      let next: string | undefined;
      if (nextCursor !== null) {
        const params = new URLSearchParams();
        for (const name of ["actor", "action"] as const) if (query[name] !== undefined) params.set(name, query[name]);
        for (const name of ["from", "to"] as const) if (query[name] !== undefined) params.set(name, query[name].toISOString());
        params.set("limit", String(limit));
        params.set("cursor", nextCursor);
        next = params.toString();
      }
      return new Page({ entries, nextCursor }, next);
    },
  }),
];
