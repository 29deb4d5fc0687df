import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };

/** A client of every route: paths, parameters, bodies and answers checked by the compiler. */
export type ApiClient = Client<paths>;

export interface ApiClientOptions {
  /** The API's URL, /api included: `https://api.example.org/api`. */
  baseUrl: string;
  /** The API key (`gsk_…`), sent as X-API-Key. */
  apiKey: string;
  /** Tries per request, the first included (default 3); 1 turns retries off. */
  attempts?: number;
  /**
   * The longest wait before a retry, in ms (default 10 000): a 429 or 503 whose Retry-After asks
   * for longer is returned to the caller at once rather than waited for.
   */
  maxRetryDelayMs?: number;
  /** Gives up on a try after this long, in ms (default 30 000); the try is then retried like a lost connection. */
  timeoutMs?: number;
  /**
   * Retries PATCHes too (default false). A PATCH sets fields, so resending it is harmless unless another
   * client changed the record in between; with If-Match, a retry of an update that did apply gets 412.
   */
  retryPatch?: boolean;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

const IDEMPOTENCY_KEY = "Idempotency-Key";
/** The answers that say "nothing was done, try again later". */
const RETRY_STATUSES = new Set([429, 503]);
const FIRST_BACKOFF_MS = 250;

/**
 * The client. On top of openapi-fetch's typed calls:
 * - every POST carries an Idempotency-Key (a new UUID, unless the call sets its own), so it can be resent
 *   safely: the server does it once and answers a resend with the first answer (Idempotent-Replayed: true);
 * - GETs and POSTs are retried on 429 and 503, after the Retry-After the server gives, and on a lost
 *   connection or a timeout, with jittered exponential backoff; PATCHes only with `retryPatch`.
 *
 *   const api = createApiClient({ baseUrl: "https://api.example.org/api", apiKey: process.env.API_KEY! });
 *   const player = orThrow(await api.GET("/player/get-player-by-nick", { params: { query: { nick: "Steve" } } }));
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { "X-API-Key": options.apiKey },
    fetch: retrying(options),
  });
}

function retrying(options: ApiClientOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const attempts = Math.max(1, options.attempts ?? 3);
  const maxDelayMs = options.maxRetryDelayMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (request) => {
    if (request.method === "POST" && !request.headers.has(IDEMPOTENCY_KEY)) request.headers.set(IDEMPOTENCY_KEY, crypto.randomUUID());
    const retryable =
      request.method === "GET" || request.method === "HEAD" || request.method === "POST" || (request.method === "PATCH" && options.retryPatch === true);
    for (let attempt = 1; ; attempt++) {
      const last = !retryable || attempt >= attempts;
      // A body can be read once: every try but the last sends a copy.
      const copy = last ? request : request.clone();
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]);
      let response: Response;
      try {
        response = await send(new Request(copy, { signal }));
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        await sleep(backoff(attempt, maxDelayMs));
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const retryAfter = retryAfterSeconds(response);
      const delay = retryAfter === undefined ? backoff(attempt, maxDelayMs) : retryAfter * 1000 + Math.random() * FIRST_BACKOFF_MS;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}

/** Full jitter: anywhere up to 250 ms, 500 ms, 1 s… (capped), so that clients refused together do not return together. */
function backoff(attempt: number, maxDelayMs: number): number {
  return Math.random() * Math.min(maxDelayMs, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function retryAfterSeconds(response: Response): number | undefined {
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

/** The GET routes that answer with an ETag and take If-None-Match. */
export type PollablePath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 304: unknown } } } ? P : never;
}[keyof paths];
type PollData<P extends PollablePath> = paths[P]["get"]["responses"][200]["content"]["application/json"];
type PollQuery<P extends PollablePath> = paths[P]["get"]["parameters"]["query"];

export type PollResult<T> = { changed: true; data: T; etag: string } | { changed: false; etag: string };

/**
 * Polls one GET cheaply: each poll sends the ETag of the last answer in If-None-Match, and while nothing
 * changed the server answers 304 without building the answer. A failure is thrown as an ApiError.
 *
 *   const maps = new EtagPoller(api, "/parkour/get-all-maps");
 *   setInterval(async () => { const r = await maps.poll(); if (r.changed) redraw(r.data); }, 10_000);
 */
export class EtagPoller<P extends PollablePath> {
  /** The ETag of the last answer delivered. */
  etag: string | undefined;
  private readonly query: PollQuery<P> | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly path: P,
    ...query: undefined extends PollQuery<P> ? [query?: PollQuery<P>] : [query: PollQuery<P>]
  ) {
    this.query = query[0];
  }

  async poll(): Promise<PollResult<PollData<P>>> {
    const header = this.etag === undefined ? {} : { "If-None-Match": this.etag };
    // One call for every path of the union: openapi-fetch cannot check a path that is a type parameter.
    const get = this.api.GET as unknown as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const result = await get(this.path, { params: { query: this.query, header } });
    if (result.response.status === 304 && this.etag !== undefined) return { changed: false, etag: this.etag };
    const data = orThrow(result) as PollData<P>;
    const etag = result.response.headers.get("ETag");
    if (etag === null) throw ApiError.of(result.response, { message: "the answer has no ETag" });
    this.etag = etag;
    return { changed: true, data, etag };
  }
}

export { ListSync, walkPages, type ListPath, type ListQuery, type ListRow, type Page, type SyncResult } from "./lists.js";
export { subscribe, type LiveEvent, type SubscribeOptions } from "./events.js";
