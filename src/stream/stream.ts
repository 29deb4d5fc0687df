import type { Response } from "express";
import type { Caller } from "../auth/caller.js";
import type { Logger } from "../core/logger.js";
import { taken } from "../core/send.js";
import type { Batch } from "./batch.js";
import { compareKeys, type EventIds, type EventKey, type StreamStart, ZERO_KEY } from "./event-id.js";
import type { KeyState, StreamEvent } from "./outbox.js";

/** A comment at least this often, so that proxies and clients see the stream alive (15 s at most, says issue 25). */
export const HEARTBEAT_MS = 10_000;
/** The `retry:` hint: how long a browser's EventSource waits before reconnecting. */
export const RETRY_MS = 2_000;

/** What a stream was asked for, after validation and authorization (resources/events/routes.ts). */
export interface StreamRequest {
  caller: Caller;
  /** SHA-256 of the key the stream was opened with: the stream ends when that key stops being valid. */
  keyHash: string;
  /** The client's address (req.ip): the stream ends when the user's allowed addresses no longer hold it. */
  address: string | undefined;
  /** The topics it may see among the types it asked for (stream/topics.ts, resources/events/visibility.ts). */
  topics: ReadonlySet<string>;
  /** After which event to start, as the client sent it (the id, and the header or parameter it came in), or at which moment; undefined: from now. */
  resumeAfter: StreamStart | undefined;
}

/** A stream's status and headers: what GET sends before its events, and HEAD alone. */
export function streamHead(res: Response): void {
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-cache, no-transform");
  // Proxies that buffer (nginx) send each event as it comes.
  res.setHeader("X-Accel-Buffering", "no");
}

/** Where a stream catching up reads, and up to where (stream/hub.ts). */
export interface Tail {
  readonly position: EventKey;
  /** The events after `after` up to `upTo` of these topics' types (a page), and where the next read starts. */
  readRange(stream: Stream, after: EventKey, upTo: EventKey): Promise<{ events: StreamEvent[]; next: EventKey }>;
}

/**
 * One client's stream: its position (the key of the last event it was sent,
 * or passed over as of another type), and how it is written. Its memory is
 * bounded by EVENTS_BUFFER_BYTES: a reader that lets more than that wait is
 * closed (having been handed one batch at most over it: 64 KB, or one
 * larger event), and resumes from the last event it had. Its heartbeats come from
 * the hub (one timer for all streams). It holds what it needs of its request
 * and nothing more: thousands of idle streams stay cheap.
 */
export class Stream {
  readonly username: string;
  readonly keyHash: string;
  readonly address: string | undefined;
  readonly userId: number;
  readonly topics: ReadonlySet<string>;
  readonly ended: Promise<void>;
  private finish!: () => void;
  /** Every event of its topics up to here has been written: where the client resumes from (sent with each heartbeat). */
  private position: EventKey = ZERO_KEY;
  private catchingUp = true;
  private done = false;
  /** Whether the response is sent in HTTP chunks (HTTP/1.1), which live events written to the socket must be framed in. */
  private chunked = true;
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    request: StreamRequest,
    private readonly res: Response,
    private readonly bufferBytes: number,
    private readonly ids: EventIds,
    private readonly logger: Logger,
  ) {
    this.username = request.caller.username;
    this.keyHash = request.keyHash;
    this.address = request.address;
    this.userId = request.caller.id;
    this.topics = request.topics;
    this.ended = new Promise((resolve) => (this.finish = resolve));
    res.once("close", () => this.end());
  }

  /** Whether the stream has ended (its client gone, its key revoked, the instance stopping). */
  get closed(): boolean {
    return this.done;
  }

  /**
   * Sends the head: status, headers, the retry hint, and the position (an id without an event) when
   * starting from now (`resumed` false).
   */
  begin(from: EventKey, resumed: boolean, key: KeyState): void {
    this.position = from;
    this.keyChanged(key);
    const res = this.res;
    streamHead(res);
    res.flushHeaders();
    this.chunked = res.chunkedEncoding;
    res.socket?.setNoDelay(true);
    this.write(`retry: ${RETRY_MS}\n${resumed ? "" : `id: ${this.ids.position(from)}\n`}\n`);
  }

  /** Reads from the outbox until the stream reaches the tail, one page at a time as the client takes them; then goes live. */
  async catchUp(hub: Tail): Promise<void> {
    try {
      while (!this.done) {
        const upTo = hub.position;
        if (compareKeys(this.position, upTo) >= 0) {
          // Nothing between: from now on the tail's events come to live() (no wait between this check and the switch).
          this.catchingUp = false;
          return;
        }
        const { events, next } = await hub.readRange(this, this.position, upTo);
        if (this.done) return;
        for (const event of events) if (this.topics.has(event.topic)) this.write(event.frame);
        this.position = next;
        await taken(this.res);
      }
    } catch (error) {
      this.logger.warn({ err: error }, "event stream: reading the outbox failed; stream closed, the client resumes");
      this.res.destroy();
    }
  }

  /** Events from the tail, in order: those after the stream's position, of its types, in one write. */
  live(batch: Batch): void {
    if (this.done || this.catchingUp || compareKeys(batch.last, this.position) <= 0) return;
    // The usual case: the whole batch is new to this stream, and its bytes are those of every stream of its types.
    const framed = compareKeys(batch.first, this.position) > 0 ? batch.of(this.topics) : batch.after(this.position, this.topics);
    if (framed) this.send(this.chunked ? framed.chunked : framed.raw);
    this.position = batch.last;
  }

  /**
   * The key's state changed: the stream ends when it no longer authenticates, when its client's address is
   * no longer allowed, or when its grace period ends.
   */
  keyChanged({ valid, until, addresses }: KeyState): void {
    clearTimeout(this.expiry);
    if (!valid || (addresses && !addresses.allows(this.address))) {
      this.end();
      return;
    }
    if (until !== undefined) {
      this.expiry = setTimeout(() => this.end(), Math.max(0, until - Date.now()));
      this.expiry.unref();
    }
  }

  /** Ends the stream cleanly: what was written is sent, then the response ends. */
  end(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.expiry);
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
    this.finish();
  }

  /**
   * A heartbeat comment (the hub's timer calls it every HEARTBEAT_MS), with the position: past events the
   * stream does not send too, so that a resume neither reads them again nor finds its point past the
   * retention. A new text each time, moved or not: it tells nothing of events the client may not see.
   */
  beat(): void {
    if (this.done) return;
    this.write(`: heartbeat\nid: ${this.ids.position(this.position)}\n\n`);
  }

  private write(chunk: string): void {
    if (this.done || this.res.destroyed || this.res.writableEnded) return;
    this.res.write(chunk);
    this.checkHeld();
  }

  /**
   * Live events, already framed, straight to the connection: the same bytes for every stream, with none of
   * the response's per-write work. In order with write(): the response writes to the same socket. Only
   * while the response is open, its head sent and its body not ended: a connection that has served its
   * response serves another caller's next request (keep-alive, a proxy's pool), never this stream's bytes.
   */
  private send(bytes: Buffer): void {
    const socket = this.res.socket;
    if (this.done || this.res.destroyed || this.res.writableEnded || !this.res.headersSent || !socket || socket.destroyed) return;
    socket.write(bytes);
    this.checkHeld();
  }

  private checkHeld(): void {
    if (this.res.writableLength > this.bufferBytes) {
      // A reader this slow would make the instance hold every event for it: it resumes from its last id instead.
      this.logger.warn({ user: this.username, heldBytes: this.res.writableLength }, "event stream reader too slow: stream closed, the client resumes");
      this.done = true;
      clearTimeout(this.expiry);
      this.res.destroy();
      this.finish();
    }
  }
}
