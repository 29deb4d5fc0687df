import type { oas31 } from "zod-openapi";
import { MAX_HEAVY_LIST_WAIT_MS } from "../core/config.js";
import { FROZEN_RETRY_AFTER_S } from "../http/error-handler.js";
import { WINDOW_MS } from "../limits/rate-limit.js";
import { EXAMPLE_CURSOR, EXAMPLE_SYNC_TOKEN } from "../lists/list-params.js";

/**
 * The response headers, each described once in components.headers and referenced by every response
 * that sends it. `required`: sent on every response it is referenced from.
 */
export const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description:
      "The id of this request, also on the server's log lines and audit entries: the X-Request-Id the client sent when it " +
      "is 1 to 128 of A-Z a-z 0-9 . _ : - (and holds no API key), else a new UUID. Quote it when reporting a problem.",
    required: true,
    schema: { type: "string", example: "3f2c1a9e-8d47-4b5a-9c1e-2a7d6b0e4f13" },
  },
  "Error-Name": {
    description:
      "The kind of this failure, by its name in the error catalogue (see the errors table): finer than the status where one " +
      "status has several meanings, as 409's `DUPLICATE`, `REFERENCE_NOT_FOUND`, `CONFLICT` and `SECRET_NOT_REPLAYED`. Sent " +
      "with every failure, a replayed one included. Names are never renamed or reused; new ones may be added, so a client " +
      "treats a name it does not know by the status.",
    required: true,
    schema: { type: "string", pattern: "^[A-Z][A-Z0-9_]*$", example: "DUPLICATE" },
  },
  ETag: {
    description:
      "The version of this answer, a strong entity tag. Send it back in If-None-Match to get a 304 while it is unchanged; " +
      "a cosmetic's also goes in If-Match on update-cosmetic.",
    required: true,
    schema: { type: "string", example: '"cosmetic-3-v2"' },
  },
  "Idempotent-Replayed": {
    description:
      "`true` when this is the stored answer of an earlier request sent with the same Idempotency-Key: nothing was done " + "again. Absent on a first answer.",
    schema: { type: "string", enum: ["true"] },
  },
  RateLimit: {
    description:
      "The per-user limit (IETF draft 8 of the RateLimit header fields): requests left in this window (r) and seconds until " +
      'it ends (t), e.g. `"user"; r=599; t=42`. Sent once the key is accepted; absent when rate limiting is off, or could not be checked.',
    schema: { type: "string", example: '"user"; r=599; t=42' },
  },
  "RateLimit-Policy": {
    description:
      'The per-user policy: requests allowed (q) per window of w seconds, e.g. `"user"; q=600; w=60`. Sent with RateLimit. ' +
      "It carries no partition key (pk): that would identify the user.",
    schema: { type: "string", example: '"user"; q=600; w=60' },
  },
  Link: {
    description:
      'On a page while rows remain: `<URL>; rel="next"` (RFC 8288), the next page: the same route and parameters with a new ' +
      "cursor. The URL is a reference relative to the URL requested (as `get-all-players?limit=100&cursor=…`): resolve it against " +
      "that URL. Absent on the last page, and on a whole list.",
    schema: { type: "string", example: `<get-all-players?limit=100&cursor=${EXAMPLE_CURSOR}>; rel="next"` },
  },
  "Sync-Token": {
    description:
      "Where the next sync starts: send it back as `since` on this route to get only the rows inserted or changed after this " +
      "answer was read, with a new Sync-Token. Opaque; it does not expire (410 only if rows were deleted since). On a page " +
      "walk every page carries the first page's: keep the one of the last page.",
    required: true,
    schema: { type: "string", example: EXAMPLE_SYNC_TOKEN },
  },
  "Cache-Control": {
    description: "On an event stream: `no-cache, no-transform`, so that no cache or proxy keeps or rewrites it.",
    required: true,
    schema: { type: "string", example: "no-cache, no-transform" },
  },
  "X-Accel-Buffering": {
    description: "On an event stream: `no`, so that a buffering proxy in front of the service (nginx) passes each event on at once.",
    required: true,
    schema: { type: "string", enum: ["no"] },
  },
  "Retry-After": {
    description:
      "Seconds to wait before retrying, a whole number: until the rate limit's one-minute window ends (429), 1 while the " +
      "database is unavailable or the instance stops, HEAVY_LIST_WAIT_MS in seconds when every full-list slot stayed taken (LISTS_BUSY), " +
      `5 when the API user already holds as many event streams as it may (TOO_MANY_STREAMS), ${FROZEN_RETRY_AFTER_S} while the operator has paused writes (WRITES_FROZEN).`,
    required: true,
    schema: { type: "integer", format: "int32", minimum: 0, maximum: Math.max(WINDOW_MS, MAX_HEAVY_LIST_WAIT_MS) / 1000, example: 17 },
  },
} as const satisfies Record<string, oas31.HeaderObject>;
export type ResponseHeader = keyof typeof RESPONSE_HEADERS;
