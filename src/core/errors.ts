import { maskKeys } from "./api-keys.js";

/** The largest request body accepted, in KB of 1024 bytes (as the JSON body parser counts them); beyond it, 413. */
export const BODY_LIMIT_KB = 100;

/**
 * The error catalogue: every failure the API can answer, with its status and its message. Handlers throw
 * these; one middleware (http/error-handler.ts) renders every failure as `{ code, message }`, `code` being
 * the HTTP status, and names its kind in the Error-Name header, for a program to tell apart errors that
 * share a status (a DUPLICATE from a REFERENCE_NOT_FOUND). A kind's name is part of the contract: never
 * renamed, never reused; new kinds may be added (a client treats an unknown name by its status).
 */
export const ERROR_CATALOGUE = {
  VALIDATION: {
    status: 400,
    meaning: "A parameter or body field is missing or invalid; the message names each one and what was wrong.",
    action: "Fix the request as the message says; do not retry it unchanged.",
  },
  MALFORMED_REQUEST: {
    status: 400,
    meaning: "The request is not valid HTTP/1.1 (its request line or a header line is malformed); answered before any route.",
    action: "Fix the client's HTTP library or the way it builds requests.",
  },
  MALFORMED_JSON: {
    status: 400,
    meaning: "The body is not valid JSON (the message gives the line and column where it stops being JSON), or a compressed body does not inflate.",
    action: "Send a valid JSON object, with Content-Type: application/json.",
  },
  UNAUTHENTICATED: {
    status: 401,
    meaning: "The API key is missing, unknown, revoked, malformed, or sent twice with different values.",
    action: "Send a valid key in X-API-Key (or Authorization: Bearer); ask an operator for a new one if it was revoked.",
  },
  FORBIDDEN: {
    status: 403,
    meaning: "The API user is not on this route's list of callers, or may not use its key from this client address.",
    action: "Ask an operator to add the user to a caller group allowed on this route, or to allow this address for the user.",
  },
  NOT_FOUND: {
    status: 404,
    meaning: "The record named by the request does not exist.",
    action: "Check the id or name; the record may have been removed.",
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    meaning: "No route has this path; when the same path under /api is a route, the message names it; outside /api, it says where the documentation, the console and the health check are.",
    action: "Check the path against the API documentation (all paths start with /api).",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: "The path exists, but not with this method.",
    action: "Use a method listed in the Allow header.",
  },
  REQUEST_TIMEOUT: {
    status: 408,
    meaning: "The request's headers did not arrive within HEADERS_TIMEOUT_MS, or the whole request within REQUEST_TIMEOUT_MS (10 s and 30 s by default).",
    action: "Send the request at once, on a working connection; retry.",
  },
  DUPLICATE: {
    status: 409,
    meaning: "A value that must be unique is already used, or the record is already recorded; the message names the value and the constraint.",
    action: "Change the conflicting value; a retried duplicate needs no action, the first one was recorded.",
  },
  REFERENCE_NOT_FOUND: {
    status: 409,
    meaning: "A record the request refers to (the player of a reward log, say) does not exist; the message names the field and the id.",
    action: "Create the record referred to first, or fix the id; retrying unchanged fails again.",
  },
  CONFLICT: {
    status: 409,
    meaning: "The record's current state forbids the change (a user already revoked, a delivery still pending, an admin locking itself out); the message says which.",
    action: "Read the record's state, and change the request or wait for the state to change.",
  },
  SECRET_NOT_REPLAYED: {
    status: 409,
    meaning: "Resent with the Idempotency-Key of a request that succeeded, whose answer held a secret (an API key, a webhook secret) that is not kept: the first request's effect stands.",
    action: "Nothing was done again. If the first answer was lost, get a new secret (rotate the key, or remove and add the webhook).",
  },
  PRECONDITION_FAILED: {
    status: 412,
    meaning: "The record changed since the ETag sent in If-Match was issued; nothing was written.",
    action: "Read the record again for its current ETag, reapply the change to it, and send it with that ETag.",
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: `The body is larger than ${BODY_LIMIT_KB} KB.`,
    action: "Send a smaller body.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning: "The body's charset, or content encoding other than gzip, deflate and br, is not supported.",
    action: "Send UTF-8 JSON, uncompressed or gzip/deflate/br.",
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    meaning: "The Idempotency-Key was already used in the last 24 hours with another request (another body or route).",
    action: "Use a new key for a new request; to get the first answer again, resend the first request unchanged.",
  },
  RATE_LIMITED: {
    status: 429,
    meaning: "Too many requests: the API user has spent its requests for this minute (RateLimit headers), or the client's address has sent too many invalid keys, or keys its user may not use from there (Retry-After alone).",
    action: "Wait the number of seconds given in Retry-After, then retry; spread requests out (the RateLimit header tells what is left).",
  },
  TOO_MANY_STREAMS: {
    status: 429,
    meaning: "The API user already holds as many event streams (GET /api/events) on this instance as it may (EVENTS_STREAMS_PER_USER, 4 by default).",
    action: "Close a stream you no longer read, or wait the seconds given in Retry-After and retry; one stream can carry every type.",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    meaning: "The request's headers are larger than the server's limit all together (16 KB unless Node's --max-http-header-size says otherwise).",
    action: "Send fewer or smaller headers (cookies and tokens do not belong here).",
  },
  INTERNAL: {
    status: 500,
    meaning: "An unexpected failure; the message carries the request id, the details are in the server's log.",
    action: "Report it with the request id; retrying may or may not help.",
  },
  SYNC_TOKEN_EXPIRED: {
    status: 410,
    meaning:
      "The list's `since` token (or a page's `cursor`) can no longer be answered: rows of the list were deleted after it was given (an operator's hand), " +
      "it is not from this database (another deployment's, or this database restored from a backup since), or it was given before tokens were bound to their database (2026-11-25). Answered by the list routes only.",
    action: "Take the full list again (without since or cursor), replace the cache with it, and keep its new Sync-Token.",
  },
  EVENT_ID_EXPIRED: {
    status: 410,
    meaning:
      "The event stream cannot resume after this event: it is older than the retention (WEBHOOKS_RETAIN_DAYS, 30 days by " +
      "default) and events after it may have been pruned, or the id is not from this database (another one, or this one " +
      "restored from a backup since), or of the format before ids were sealed. Answered by GET /api/events only.",
    action: "Reload what you keep by sync (the lists, their Sync-Token), then open the stream again without Last-Event-ID.",
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    meaning: "The database cannot be reached, or did not answer in time.",
    action: "Retry later, with backoff; nothing was written.",
  },
  LISTS_BUSY: {
    status: 503,
    meaning: "Every full-list slot of the instance (HEAVY_LISTS_AT_ONCE) stayed taken for HEAVY_LIST_WAIT_MS (10 s by default). Whole lists only: a page (with limit) takes no slot.",
    action: "Retry after the seconds given in Retry-After; poll with If-None-Match, as a 304 takes no slot.",
  },
  STARTING: {
    status: 503,
    meaning: "This instance is starting: it opens the database and applies the migrations.",
    action: "Retry after the seconds given in Retry-After, or send traffic to another instance; nothing was done.",
  },
  SHUTTING_DOWN: {
    status: 503,
    meaning: "This instance is stopping (answered by GET /readyz, and by GET /api/events to a stream asked for meanwhile).",
    action: "Send traffic to another instance; this one finishes what it has and exits.",
  },
} as const satisfies Record<string, { status: number; meaning: string; action: string }>;

export type ErrorKind = keyof typeof ERROR_CATALOGUE;

/** The response header naming the kind of every failure (a catalogue key, such as `DUPLICATE`). */
export const ERROR_NAME_HEADER = "Error-Name";

export class ApiError extends Error {
  readonly status: number;

  /** The message may echo what a client sent (a field name, a value, a path): anything key-shaped in it is masked. */
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(maskKeys(message), options);
    this.name = "ApiError";
    this.status = ERROR_CATALOGUE[kind].status;
  }

  toBody(): { code: number; message: string } {
    return { code: this.status, message: this.message };
  }
}

const WHERE_TO_GO = "the API's documentation is at /api/docs, the admin console at /admin, the health check at /readyz";

/**
 * What a 404 adds: the route meant when only /api was missing; where to go for
 * a newcomer's first path (/, /api) or any other outside /api. A path under
 * /api that is no route is a client's mistake: nothing added.
 */
function routeHint(path: string, suggestion: string | undefined): string {
  if (suggestion) return `: the API's paths start with /api, did you mean ${suggestion}?`;
  if (path === "/" || path === "/api" || path === "/api/") return `: ${WHERE_TO_GO}`;
  if (path.startsWith("/api/")) return "";
  return `: the API's paths start with /api; ${WHERE_TO_GO}`;
}

/** Constructors for the catalogue, so messages are made the same way everywhere. */
export const errors = {
  validation: (message: string) => new ApiError("VALIDATION", message),
  malformedJson: (message = "Malformed JSON in request body") => new ApiError("MALFORMED_JSON", message),
  /** One message for a missing and a wrong key: the answer does not tell a guesser which it was. */
  unauthenticated: () => new ApiError("UNAUTHENTICATED", "API key missing or invalid: send a valid key in the X-API-Key header"),
  forbidden: () => new ApiError("FORBIDDEN", "This API user may not call this route"),
  /** A user no group names is refused everywhere: the message says which settings let it in. */
  inNoCallerGroup: () =>
    new ApiError(
      "FORBIDDEN",
      "This API user is in no caller group, so it may call no route: an operator adds its name to CALLERS_USER_A, CALLERS_USER_B, CALLERS_USER_C or CALLERS_USER_D and restarts the server",
    ),
  /** The message does not say which addresses are allowed: that list is the operator's business. */
  addressNotAllowed: () => new ApiError("FORBIDDEN", "This API user may not call the API from this client address"),
  notFound: (what: string) => new ApiError("NOT_FOUND", `${what} not found`),
  /** `suggestion`: the path the caller most likely meant (the same one under /api). */
  routeNotFound: (method: string, path: string, suggestion?: string) =>
    new ApiError("ROUTE_NOT_FOUND", `No route ${method} ${path}${routeHint(path, suggestion)}`),
  consoleNotBuilt: () => new ApiError("ROUTE_NOT_FOUND", "No route GET /admin (the console is not built: run npm run build)"),
  methodNotAllowed: (method: string, path: string) =>
    new ApiError("METHOD_NOT_ALLOWED", `Method ${method} not allowed on ${path}`),
  conflict: (message: string) => new ApiError("CONFLICT", message),
  duplicate: (message: string) => new ApiError("DUPLICATE", message),
  referenceNotFound: (message: string) => new ApiError("REFERENCE_NOT_FOUND", message),
  secretNotReplayed: (message: string) => new ApiError("SECRET_NOT_REPLAYED", message),
  preconditionFailed: (what: string) =>
    new ApiError("PRECONDITION_FAILED", `${what} changed since the ETag sent in If-Match; nothing was written`),
  idempotencyKeyReused: (firstRoute: string, sameRoute: boolean) =>
    new ApiError(
      "IDEMPOTENCY_KEY_REUSED",
      `Idempotency-Key already used in the last 24 hours ${sameRoute ? `with another body on ${firstRoute}` : `on ${firstRoute}`}: use a new key for a new request`,
    ),
  malformedRequest: (message = "Malformed HTTP request") => new ApiError("MALFORMED_REQUEST", message),
  requestTimeout: () => new ApiError("REQUEST_TIMEOUT", "Request not received in time"),
  headersTooLarge: (limitBytes: number) =>
    new ApiError("HEADERS_TOO_LARGE", `Request headers larger than ${Math.round(limitBytes / 1024)} KB`),
  payloadTooLarge: () => new ApiError("PAYLOAD_TOO_LARGE", `Request body larger than ${BODY_LIMIT_KB} KB`),
  unsupportedMediaType: (message: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", message),
  unsupportedCharset: (charset: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", `Unsupported charset "${charset}"`),
  rateLimited: (message: string) => new ApiError("RATE_LIMITED", message),
  internal: (requestId: string, cause?: unknown) =>
    new ApiError("INTERNAL", `Internal server error (request id ${requestId})`, { cause }),
  databaseUnavailable: () => new ApiError("DATABASE_UNAVAILABLE", "Database unavailable, retry later"),
  listsBusy: (retryAfterSeconds: number) =>
    new ApiError("LISTS_BUSY", `Too many full lists in progress on this instance: retry in ${retryAfterSeconds} s`),
  syncTokenExpired: (reason: string) => new ApiError("SYNC_TOKEN_EXPIRED", `since: ${reason}; take the full list again, without since`),
  cursorExpired: (reason: string) => new ApiError("SYNC_TOKEN_EXPIRED", `cursor: ${reason}; walk the list again from its first page, without cursor`),
  tooManyStreams: (limit: number, retryAfterSeconds: number) =>
    new ApiError("TOO_MANY_STREAMS", `This API user already has ${limit} event stream${limit === 1 ? "" : "s"} open on this instance: close one, or retry in ${retryAfterSeconds} s`),
  eventIdExpired: (parameter: string, reason: string) =>
    new ApiError("EVENT_ID_EXPIRED", `${parameter}: the stream cannot resume after this event: ${reason}; reload by sync, then open the stream without it`),
  typesForbidden: (types: readonly string[]) =>
    new ApiError("FORBIDDEN", `types: this API user may not subscribe to ${types.join(", ")} (it may call no route that answers those records with every field their events carry)`),
  starting: () => new ApiError("STARTING", "Not ready: this instance is starting (opening the database, applying migrations); retry in a moment"),
  shuttingDown: () => new ApiError("SHUTTING_DOWN", "Not ready: this instance is shutting down"),
};
