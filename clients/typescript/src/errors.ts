// A failure the API answers, as a caller handles it: the ApiError, and orThrow that raises it. Imports nothing of the
// package, so that the transport (client.ts) and the helpers (poll.ts, lists.ts, events.ts) all build on it.

/** Retry-After in seconds (the delta form; a date is ignored), or undefined. */
export function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get("Retry-After");
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
}

/** A failure answered by the API (`{code, message}`), with what a caller acts on. */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly status: number,
    message: string,
    /** X-Request-Id: quote it when reporting a problem. */
    readonly requestId: string | undefined,
    /** Retry-After of a 429 or 503, in seconds. */
    readonly retryAfterSeconds: number | undefined,
    /**
     * Error-Name: the kind of failure in the API's error catalogue, finer than the status (a 409 is `DUPLICATE`,
     * `REFERENCE_NOT_FOUND`, `CONFLICT` or `SECRET_NOT_REPLAYED`). New names may be added: treat an unknown one by its status.
     */
    readonly error?: string,
  ) {
    super(message);
  }

  static of(response: Response, body: unknown): ApiError {
    const message =
      typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string"
        ? (body as { message: string }).message
        : `HTTP ${response.status}`;
    return new ApiError(
      response.status,
      message,
      response.headers.get("X-Request-Id") ?? undefined,
      retryAfterSeconds(response),
      response.headers.get("Error-Name") ?? undefined,
    );
  }
}

/** The data of a call, or its failure thrown as an ApiError: `const maps = orThrow(await api.GET("/parkour/get-all-maps"))`. */
export function orThrow<R extends { data?: unknown; error?: unknown; response: Response }>(result: R): Exclude<R["data"], undefined> {
  if (!result.response.ok || result.data === undefined) throw ApiError.of(result.response, result.error);
  return result.data as Exclude<R["data"], undefined>;
}
