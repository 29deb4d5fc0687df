import createClient, { type Client } from "openapi-fetch";
import { retryAfterSeconds } from "./errors.js";
import type { paths } from "./schema.js";

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
