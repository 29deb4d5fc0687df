import type { Response } from "express";
import type { Config } from "../core/config.js";
import { errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import { type Batch, batches, fanOutSpan } from "./batch.js";
import { CatchUpGate } from "./catch-up-gate.js";
import { HubChannels } from "./channels.js";
import { EventIds, type EventKey, ZERO_KEY } from "./event-id.js";
import { Heartbeats } from "./heartbeats.js";
import { adoptForeignEvents, type EventFraming, eventsBetween, keyState, lastEvent, nextEvents, PAGE, type StreamEvent, syncKey } from "./outbox.js";
import { inSlices, ReadPace } from "./pace.js";
import { startPoint } from "./resume.js";
import { Stream, type StreamRequest, streamHead, type Tail } from "./stream.js";
import { topicOf, typeOf } from "./topics.js";

/** The outbox is read this often without a notification (a lost LISTEN, a notification that came before its commit was visible). */
const POLL_MS = 1_000;
/** While a channel is down, the outbox and the keys of open streams are looked at this often. */
const DEGRADED_POLL_MS = 250;
/** Events held back by an older transaction still running: read again this soon, doubling while held, up to DEGRADED_POLL_MS. */
const HELD_BACK_POLL_MS = 5;
/** Seconds a client refused for too many streams is told to wait. */
const STREAMS_RETRY_AFTER_S = 5;

/**
 * The event streams of this instance (GET /api/events; docs/CALLING.md, "Live events"), fed from the outbox
 * by one tail that reads it in the stream's order, the same on every instance: resuming after an id sends
 * every later event once. The tail wakes on announce() and LISTEN, polls each second, and hands each page
 * to the live streams in slices, paced by pace.ts; a new stream first catches up with reads of its own,
 * in its user's turn (catch-up-gate.ts). One timer beats every heartbeat (heartbeats.ts).
 */
export class EventHub implements Tail {
  private head: EventKey = ZERO_KEY;
  private readonly streams = new Set<Stream>();
  private readonly perUser = new Map<number, number>();
  private starting: Promise<void> | undefined;
  private closed = false;
  private readonly channels: HubChannels;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private readonly pace = new ReadPace();
  private readonly catchUps = new CatchUpGate();
  /** How events are framed: set at start, once the database's key is read. */
  private framing: EventFraming | undefined;
  /** Reads in a row that found events held back. */
  private heldFor = 0;
  private readonly heartbeats = new Heartbeats();

  constructor(
    private readonly db: Database,
    private readonly config: Pick<Config, "eventsStreamsPerUser" | "eventsBufferBytes" | "webhooksRetainDays">,
    private readonly logger: Logger,
  ) {
    this.channels = new HubChannels(db, logger, { events: () => this.kick(), userChanged: (username) => this.recheckKeys(username) });
  }

  /** Streams open on this instance. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Serves one stream until the client leaves, its key stops being valid, the
   * reader is too slow, or the instance stops. What it throws before the
   * first byte (429, 410, 503) is the answer.
   */
  async serve(request: StreamRequest, res: Response): Promise<void> {
    if (this.closed) throw errors.shuttingDown();
    const userId = request.caller.id;
    const open = this.perUser.get(userId) ?? 0;
    if (open >= this.config.eventsStreamsPerUser) {
      res.setHeader("Retry-After", String(STREAMS_RETRY_AFTER_S));
      throw errors.tooManyStreams(this.config.eventsStreamsPerUser, STREAMS_RETRY_AFTER_S);
    }
    // Taken before any wait, so that concurrent requests of one user count each other.
    this.perUser.set(userId, open + 1);
    const release = () => {
      const left = (this.perUser.get(userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(userId, left);
      else this.perUser.delete(userId);
    };
    let key: Awaited<ReturnType<typeof keyState>>;
    let from: EventKey | undefined;
    try {
      await this.start();
      // With no stream live the tail is not read (readTail): the position moves to the outbox's end now, unless a stream went live meanwhile.
      const last = this.streams.size === 0 ? await lastEvent(this.db, this.head) : undefined;
      if (last && this.streams.size === 0) this.head = last;
      key = await keyState(this.db, request.keyHash);
      if (!key.valid) throw errors.unauthenticated();
      // Changed since the request was authenticated: as the next request would be answered.
      if (key.addresses && !key.addresses.allows(request.address)) throw errors.addressNotAllowed();
      from = request.resumeAfter && (await startPoint(this.db, this.framing!.ids, request.resumeAfter, this.config.webhooksRetainDays));
      if (this.closed) throw errors.shuttingDown();
    } catch (error) {
      release();
      throw error;
    }
    if (res.destroyed || res.req.method === "HEAD") {
      release();
      // HEAD: the head a stream would have, and the end of the response; the connection serves on.
      if (!res.destroyed) {
        streamHead(res);
        res.end();
      }
      return;
    }
    const stream = new Stream(request, res, this.config.eventsBufferBytes, this.framing!.ids, this.logger);
    this.streams.add(stream);
    const unbeat = this.heartbeats.add(stream);
    stream.begin(from ?? this.head, request.resumeAfter !== undefined && !("startAt" in request.resumeAfter), key); // resumed: no position sent
    // The request is answered from here on by the stream alone: what served it until now (the
    // router's chain, its promises) is let go, and a stream costs only itself and its connection.
    void stream.catchUp(this);
    void stream.ended.then(() => {
      this.streams.delete(stream);
      unbeat();
      release();
    });
  }

  /** Events were committed through this instance: its streams read them now, and every instance is told (channels.ts). */
  announce(): void {
    this.kick();
    this.channels.announce();
  }

  /** Ends every stream (their clients reconnect, elsewhere) and stops listening; new streams are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.pace.stop();
    this.heartbeats.stop();
    for (const stream of this.streams) stream.end();
    await this.channels.close();
    await this.reading;
  }

  /** The tail's position: every event up to it has been handed to the live streams. */
  get position(): EventKey {
    return this.head;
  }

  /** The events after `after`, up to `upTo`, of the stream's types: a stream catching up, in its turn (catch-up-gate.ts). */
  readRange(stream: Stream, after: EventKey, upTo: EventKey): Promise<{ events: StreamEvent[]; next: EventKey }> {
    const types = [...new Set([...stream.topics].map(typeOf))];
    return this.catchUps.run(stream.userId, () =>
      stream.closed ? Promise.resolve({ events: [], next: upTo }) : eventsBetween(this.db, this.framing!, after, upTo, types),
    );
  }

  private start(): Promise<void> {
    return (this.starting ??= this.startOnce().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    }));
  }

  private async startOnce(): Promise<void> {
    this.framing ??= { ids: new EventIds(await syncKey(this.db)), topicOf };
    const adopted = await adoptForeignEvents(this.db);
    if (adopted > 0)
      this.logger.warn({ events: adopted }, "event outbox: events written by another server's transactions (a restore) put before every new one");
    await this.channels.listen();
    // From where the outbox ends now: streams that resume read what came before themselves.
    this.head = (await lastEvent(this.db)) ?? ZERO_KEY;
    this.schedule();
  }

  private schedule(delay = this.channels.down > 0 ? DEGRADED_POLL_MS : POLL_MS): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.channels.down > 0) this.recheckKeys(undefined);
      this.kick();
    }, delay);
    this.timer.unref();
  }

  /** Reads the tail; once at a time, again if asked meanwhile; with many streams live, at the pace's gap. */
  private kick(): void {
    if (this.closed || !this.starting) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (!this.pace.ready(this.streams.size, () => this.kick())) return;
    this.reading = this.readTail()
      .then((heldBack) => {
        this.heldFor = heldBack ? this.heldFor + 1 : 0;
        this.schedule(heldBack ? Math.min(DEGRADED_POLL_MS, HELD_BACK_POLL_MS * 2 ** (this.heldFor - 1)) : undefined);
      })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, "event streams: reading the outbox failed; will retry");
        this.schedule();
      })
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Hands the new events to the streams; whether committed events wait behind a running transaction. */
  private async readTail(): Promise<boolean> {
    if (this.streams.size === 0) return false; // nobody to hand events to: the next stream moves the position (serve)
    for (;;) {
      const { events, held } = await nextEvents(this.db, this.framing!, this.head);
      for (const batch of batches(events)) {
        // Moved first: a stream that goes live while the batch is handed out starts after it (and reads it itself).
        this.head = batch.last;
        await this.fanOut(batch);
      }
      if (events.length < PAGE) return held;
    }
  }

  /** Hands a batch to every live stream, in slices with the event loop free between them; tells the pace what the slices took. */
  private async fanOut(batch: Batch): Promise<void> {
    this.pace.handed(await fanOutSpan(batch, this.streams.size, () => inSlices([...this.streams], (stream) => stream.live(batch))));
  }

  /**
   * A user's keys or addresses changed (revoked, rotated, allow-ip): its streams whose key no longer
   * authenticates, or whose client's address is no longer allowed, end. All streams when undefined.
   */
  private recheckKeys(username: string | undefined): void {
    const affected = [...this.streams].filter((s) => username === undefined || s.username.toLowerCase() === username.toLowerCase());
    for (const keyHash of new Set(affected.map((s) => s.keyHash))) {
      keyState(this.db, keyHash)
        .then((state) => {
          for (const stream of affected) if (stream.keyHash === keyHash) stream.keyChanged(state);
        })
        .catch((error: unknown) => this.logger.warn({ err: error }, "event streams: checking a key failed; will retry"));
    }
  }
}
