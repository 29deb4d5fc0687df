import { ApiError } from "./errors.js";

/** One event of GET /api/events: what a webhook receiver gets, with its place in the stream. */
export interface LiveEvent<T = unknown> {
  /** Opaque; pass the last one handled as `lastEventId` to resume after it (a restart of your process). */
  id: string;
  /** `reward_log.created`, `cosmetic.updated`, … */
  type: string;
  /** When the write happened (ISO 8601, UTC). */
  timestamp: string;
  /** The record as the API answers it. */
  data: T;
}

export interface SubscribeOptions {
  /** The API's URL, /api included: `https://api.example.org/api`. */
  baseUrl: string;
  /** The API key (`gsk_…`), sent as X-API-Key. */
  apiKey: string;
  /** The event types (default: every type the key's user may see). */
  types?: readonly string[];
  /** Resume after this event (the `id` of the last one handled before a restart); default: from now. */
  lastEventId?: string;
  /** Stops the subscription (as does leaving the `for await` loop). */
  signal?: AbortSignal;
  /** How long without a byte (not even a heartbeat, sent every 10 s) before the connection counts as dead (default 30 000 ms). */
  idleTimeoutMs?: number;
  /** The longest wait between reconnections, in ms (default 30 000). */
  maxRetryDelayMs?: number;
  /** Told about each reconnection, with what ended the connection before it (default: nothing). */
  onReconnect?: (cause: unknown, delayMs: number) => void;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Refusals that no reconnection changes: the key, the types, or a resume point past the retention (410: reload by sync). */
const FINAL_STATUSES = new Set([400, 401, 403, 404, 410]);

/**
 * The API's writes as they commit, as an async iterator over GET /api/events
 * (server-sent events). It reconnects by itself, to whichever instance
 * answers, resuming after the last event it yielded (Last-Event-ID): no
 * event is lost nor repeated across reconnections. It waits the Retry-After
 * of a 429 or 503, otherwise the server's `retry:` hint, with jittered
 * backoff while failures repeat. Throws an ApiError for a refusal no retry
 * changes: 401, 403 (a type the user may not see), 410 (the resume point is
 * past the retention: reload your data by sync, then subscribe without it).
 *
 *   for await (const event of subscribe({ baseUrl, apiKey, types: ["reward_log.created"] })) {
 *     give(event.data);
 *     saveCursor(event.id);
 *   }
 */
export async function* subscribe<T = unknown>(options: SubscribeOptions): AsyncGenerator<LiveEvent<T>, void, undefined> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  let lastEventId = options.lastEventId;
  let retryMs = 2_000;
  let failures = 0;
  while (!options.signal?.aborted) {
    const connection = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, connection.signal]) : connection.signal;
    let cause: unknown;
    let waitMs: number | undefined;
    try {
      const url = new URL(`${options.baseUrl.replace(/\/+$/, "")}/events`);
      if (options.types) url.searchParams.set("types", options.types.join(","));
      const headers: Record<string, string> = { Accept: "text/event-stream", "X-API-Key": options.apiKey };
      if (lastEventId !== undefined) headers["Last-Event-ID"] = lastEventId;
      const response = await send(new Request(url, { headers, signal }));
      if (response.status !== 200 || !response.body) {
        const body = (await response.json().catch(() => undefined)) as unknown;
        const error = ApiError.of(response, body);
        if (FINAL_STATUSES.has(response.status)) throw error;
        cause = error;
        if (error.retryAfterSeconds !== undefined) waitMs = error.retryAfterSeconds * 1000;
      } else {
        for await (const frame of frames(response.body, idleTimeoutMs, connection, options.signal)) {
          if (frame.retry !== undefined) retryMs = frame.retry;
          if (frame.id !== undefined) lastEventId = frame.id;
          failures = 0;
          if (frame.data === undefined) continue;
          const body = JSON.parse(frame.data) as { type: string; timestamp: string; data: T };
          yield { id: lastEventId!, type: body.type, timestamp: body.timestamp, data: body.data };
        }
        cause = new Error("the server ended the stream");
      }
    } catch (error) {
      if (error instanceof ApiError && FINAL_STATUSES.has(error.status)) throw error;
      if (options.signal?.aborted) return;
      cause = error;
    } finally {
      connection.abort();
    }
    failures++;
    // The first reconnection after a stream that worked waits the server's hint; then full jitter, doubling.
    const delay = waitMs ?? (failures === 1 ? retryMs : Math.random() * Math.min(maxDelayMs, retryMs * 2 ** (failures - 1)));
    options.onReconnect?.(cause, delay);
    await sleep(delay, options.signal);
  }
}

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

/** The frames of an event stream (WHATWG parsing: fields, comments, CR/LF/CRLF); a frame with an id alone moves the position. */
async function* frames(body: ReadableStream<Uint8Array>, idleTimeoutMs: number, connection: AbortController, signal?: AbortSignal): AsyncGenerator<Frame> {
  const reader = body.getReader();
  // An abort ends the read here, not only through fetch's own signal: the signal a request follows
  // (AbortSignal.any of the caller's and the connection's) was seen not to reach a body being read.
  const stop = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", stop, { once: true });
  connection.signal.addEventListener("abort", stop, { once: true });
  const decoder = new TextDecoder();
  let idle = setTimeout(() => connection.abort(new Error(`no byte for ${idleTimeoutMs} ms: connection dead`)), idleTimeoutMs);
  let buffer = "";
  let frame: Frame = {};
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        // Ended by an abort (the caller's, or the idle timeout): say why, as a failed read would.
        if (connection.signal.aborted) throw connection.signal.reason;
        if (signal?.aborted) throw signal.reason;
        return;
      }
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no byte for ${idleTimeoutMs} ms: connection dead`)), idleTimeoutMs);
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A lone CR at the end of the buffer may be the first half of a CRLF: wait for the next chunk.
        if (buffer[end] === "\r" && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) frame.data = data.join("\n");
          if (frame.id !== undefined || frame.data !== undefined || frame.retry !== undefined) yield frame;
          frame = {};
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id" && !value.includes("\0")) frame.id = value;
        else if (field === "event") frame.event = value;
        else if (field === "data") data.push(value);
        else if (field === "retry" && /^\d+$/.test(value)) frame.retry = Number(value);
      }
    }
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", stop);
    connection.signal.removeEventListener("abort", stop);
    await reader.cancel().catch(() => undefined);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
