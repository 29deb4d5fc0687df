/**
 * The error catalogue: every failure the API can answer, with its status and
 * its message. Handlers throw these; one middleware (http/error-handler.ts)
 * renders every failure as `{ code, message }`, `code` being the HTTP status.
 */
export const ERROR_CATALOGUE = {
  VALIDATION: { status: 400, meaning: "A parameter or body field is missing or invalid; the message names it." },
  MALFORMED_JSON: { status: 400, meaning: "The body is not valid JSON." },
  UNAUTHENTICATED: { status: 401, meaning: "The API key is missing, unknown, revoked or sent twice with different values." },
  FORBIDDEN: { status: 403, meaning: "The API user is not on this route's list of callers." },
  NOT_FOUND: { status: 404, meaning: "The record named by the request does not exist." },
  ROUTE_NOT_FOUND: { status: 404, meaning: "No route has this path." },
  METHOD_NOT_ALLOWED: { status: 405, meaning: "The path exists, but not with this method (see the Allow header)." },
  CONFLICT: { status: 409, meaning: "The write conflicts with existing data; the message names the value and the constraint." },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: "The body is larger than 100 KB." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: "The body's content encoding or charset is not supported." },
  INTERNAL: { status: 500, meaning: "An unexpected failure; the message carries the request id to quote." },
  DATABASE_UNAVAILABLE: { status: 503, meaning: "The database cannot be reached; retry later." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorKind = keyof typeof ERROR_CATALOGUE;

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ApiError";
    this.status = ERROR_CATALOGUE[kind].status;
  }

  toBody(): { code: number; message: string } {
    return { code: this.status, message: this.message };
  }
}

/** Constructors for the catalogue, so messages are made the same way everywhere. */
export const errors = {
  validation: (message: string) => new ApiError("VALIDATION", message),
  malformedJson: () => new ApiError("MALFORMED_JSON", "Malformed JSON in request body"),
  unauthenticated: () => new ApiError("UNAUTHENTICATED", "API key missing or invalid"),
  forbidden: () => new ApiError("FORBIDDEN", "This API user may not call this route"),
  notFound: (what: string) => new ApiError("NOT_FOUND", `${what} not found`),
  routeNotFound: (method: string, path: string) => new ApiError("ROUTE_NOT_FOUND", `No route ${method} ${path}`),
  methodNotAllowed: (method: string, path: string) =>
    new ApiError("METHOD_NOT_ALLOWED", `Method ${method} not allowed on ${path}`),
  conflict: (message: string) => new ApiError("CONFLICT", message),
  payloadTooLarge: () => new ApiError("PAYLOAD_TOO_LARGE", "Request body larger than 100 KB"),
  unsupportedMediaType: (message: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", message),
  internal: (requestId: string, cause?: unknown) =>
    new ApiError("INTERNAL", `Internal server error (request id ${requestId})`, { cause }),
  databaseUnavailable: () => new ApiError("DATABASE_UNAVAILABLE", "Database unavailable, retry later"),
};
