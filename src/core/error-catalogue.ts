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
    meaning:
      "No route has this path; when the same path under /api is a route, the message names it; outside /api, it says where the documentation, the console and the health check are.",
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
    meaning:
      "The record's current state forbids the change (a user already revoked, a delivery still pending, an admin locking itself out); the message says which.",
    action: "Read the record's state, and change the request or wait for the state to change.",
  },
  SECRET_NOT_REPLAYED: {
    status: 409,
    meaning:
      "Resent with the Idempotency-Key of a request that succeeded, whose answer held a secret (an API key, a webhook secret) that is not kept: the first request's effect stands.",
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
    meaning: "The Idempotency-Key was already used in the last 24 hours (by default) with another request (another body or route).",
    action: "Use a new key for a new request; to get the first answer again, resend the first request unchanged.",
  },
  RATE_LIMITED: {
    status: 429,
    meaning:
      "Too many requests: the API user has spent its requests for this minute (RateLimit headers), or the client's address has sent too many invalid keys, or keys its user may not use from there (Retry-After alone).",
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
  PLAYER_ERASED: {
    status: 410,
    meaning: "The player was erased (the message gives the receipt): nothing of theirs is left; a resend of a request that named them gets this.",
    action: "Drop what you keep of the player (an erasure is final); do not retry.",
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    meaning: "The database cannot be reached, or did not answer in time.",
    action: "Retry later, with backoff; nothing was written.",
  },
  LISTS_BUSY: {
    status: 503,
    meaning:
      "Every full-list slot of the instance (HEAVY_LISTS_AT_ONCE) stayed taken for HEAVY_LIST_WAIT_MS (10 s by default). Whole lists only: a page (with limit) takes no slot.",
    action: "Retry after the seconds given in Retry-After; poll with If-None-Match, as a 304 takes no slot.",
  },
  STARTING: {
    status: 503,
    meaning: "This instance is starting: it opens the database and applies the migrations.",
    action: "Retry after the seconds given in Retry-After, or send traffic to another instance; nothing was done.",
  },
  WRITES_FROZEN: {
    status: 503,
    meaning:
      "The operator has paused every write on this database (`cli freeze`, for the last backup of a move, say): reads go on; the message says since when and why. Nothing was written.",
    action: "Retry the write (with the same Idempotency-Key) after the seconds given in Retry-After, as long as it takes; keep reading meanwhile.",
  },
  SHUTTING_DOWN: {
    status: 503,
    meaning: "This instance is stopping (answered by GET /readyz, and by GET /api/events to a stream asked for meanwhile).",
    action: "Send traffic to another instance; this one finishes what it has and exits.",
  },
} as const satisfies Record<string, { status: number; meaning: string; action: string }>;
