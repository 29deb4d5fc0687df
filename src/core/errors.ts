import { maskKeys } from "./api-keys.js";

import { BODY_LIMIT_KB, ERROR_CATALOGUE } from "./error-catalogue.js";

export { BODY_LIMIT_KB, ERROR_CATALOGUE } from "./error-catalogue.js";

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
  methodNotAllowed: (method: string, path: string) => new ApiError("METHOD_NOT_ALLOWED", `Method ${method} not allowed on ${path}`),
  conflict: (message: string) => new ApiError("CONFLICT", message),
  playerErased: (message: string) => new ApiError("PLAYER_ERASED", message),
  duplicate: (message: string) => new ApiError("DUPLICATE", message),
  referenceNotFound: (message: string) => new ApiError("REFERENCE_NOT_FOUND", message),
  secretNotReplayed: (message: string) => new ApiError("SECRET_NOT_REPLAYED", message),
  preconditionFailed: (what: string) => new ApiError("PRECONDITION_FAILED", `${what} changed since the ETag sent in If-Match; nothing was written`),
  idempotencyKeyReused: (firstRoute: string, sameRoute: boolean, retainHours: number) =>
    new ApiError(
      "IDEMPOTENCY_KEY_REUSED",
      `Idempotency-Key already used in the last ${retainHours} hours ${sameRoute ? `with another body on ${firstRoute}` : `on ${firstRoute}`}: use a new key for a new request`,
    ),
  malformedRequest: (message = "Malformed HTTP request") => new ApiError("MALFORMED_REQUEST", message),
  requestTimeout: () => new ApiError("REQUEST_TIMEOUT", "Request not received in time"),
  headersTooLarge: (limitBytes: number) => new ApiError("HEADERS_TOO_LARGE", `Request headers larger than ${Math.round(limitBytes / 1024)} KB`),
  payloadTooLarge: () => new ApiError("PAYLOAD_TOO_LARGE", `Request body larger than ${BODY_LIMIT_KB} KB`),
  unsupportedMediaType: (message: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", message),
  unsupportedCharset: (charset: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", `Unsupported charset "${charset}"`),
  rateLimited: (message: string) => new ApiError("RATE_LIMITED", message),
  internal: (requestId: string, cause?: unknown) => new ApiError("INTERNAL", `Internal server error (request id ${requestId})`, { cause }),
  databaseUnavailable: () => new ApiError("DATABASE_UNAVAILABLE", "Database unavailable, retry later"),
  listsBusy: (retryAfterSeconds: number) => new ApiError("LISTS_BUSY", `Too many full lists in progress on this instance: retry in ${retryAfterSeconds} s`),
  syncTokenExpired: (reason: string) => new ApiError("SYNC_TOKEN_EXPIRED", `since: ${reason}; take the full list again, without since`),
  cursorExpired: (reason: string) => new ApiError("SYNC_TOKEN_EXPIRED", `cursor: ${reason}; walk the list again from its first page, without cursor`),
  tooManyStreams: (limit: number, retryAfterSeconds: number) =>
    new ApiError(
      "TOO_MANY_STREAMS",
      `This API user already has ${limit} event stream${limit === 1 ? "" : "s"} open on this instance: close one, or retry in ${retryAfterSeconds} s`,
    ),
  eventIdExpired: (parameter: string, reason: string, what = "resume after this event") =>
    new ApiError("EVENT_ID_EXPIRED", `${parameter}: the stream cannot ${what}: ${reason}; reload by sync, then open the stream without it`),
  typesForbidden: (types: readonly string[]) =>
    new ApiError(
      "FORBIDDEN",
      `types: this API user may not subscribe to ${types.join(", ")} (it may call no route that answers those records with every field their events carry)`,
    ),
  starting: () => new ApiError("STARTING", "Not ready: this instance is starting (opening the database, applying migrations); retry in a moment"),
  writesFrozen: (since: string, reason: string) =>
    new ApiError(
      "WRITES_FROZEN",
      `Writes are paused by the operator since ${since}${reason ? ` (${reason})` : ""}; reads go on and nothing was written: retry later`,
    ),
  shuttingDown: () => new ApiError("SHUTTING_DOWN", "Not ready: this instance is shutting down"),
};
