import http from "node:http";
import type { Database } from "../../src/db/database.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { compareKeys, EventIds, type EventKey } from "../../src/stream/event-id.js";
import { lastEvent, syncKey } from "../../src/stream/outbox.js";

/**
 * A resume point of another database (sealed under a key of zeros): GET /api/events answers it 410 once
 * the key and the types passed, so that the generic tests of every route (auth, fuzz, headers) get an
 * answer that ends, rather than a stream that never does.
 */
export const EXPIRED_EVENT_ID = new EventIds(Buffer.alloc(32)).event({ xid: 1n, id: 1n });

export interface SseEvent {
  id: string;
  event: string;
  data: string;
  /** The write's trace, when the service traced it (docs/OPERATIONS.md, "Traces"). */
  traceparent?: string;
}

/**
 * One GET /api/events, read as a client would (the WHATWG parsing rules for
 * the fields it uses): its status, headers, the events, the last id (an id
 * alone moves it too), the comments, and whether the server ended it.
 */
export class SseClient {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** The body of an answer that was not a stream (a 4xx), as text. */
  body = "";
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  lastId = "";
  retry: number | undefined;
  /** Set when the connection ended, by the server or by close(). */
  ended = false;
  private request: http.ClientRequest;
  private response: http.IncomingMessage | undefined;
  private readonly opened: Promise<void>;
  private readonly closed: Promise<void>;

  constructor(url: string, headers: Record<string, string>, localAddress?: string) {
    let resolveOpen!: () => void;
    let resolveClosed!: () => void;
    this.opened = new Promise((r) => (resolveOpen = r));
    this.closed = new Promise((r) => (resolveClosed = r));
    const done = () => {
      this.ended = true;
      resolveOpen();
      resolveClosed();
    };
    this.request = http.get(url, { headers: { Accept: "text/event-stream", ...headers }, localAddress }, (res) => {
      this.response = res;
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.setEncoding("utf8");
      let buffer = "";
      let event: Partial<SseEvent> = {};
      let data: string[] = [];
      res.on("data", (chunk: string) => {
        if (this.status !== 200) {
          this.body += chunk;
          return;
        }
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
          if (line === "") {
            if (data.length > 0)
              this.events.push({
                id: this.lastId,
                event: event.event ?? "message",
                data: data.join("\n"),
                ...(event.traceparent ? { traceparent: event.traceparent } : {}),
              });
            event = {};
            data = [];
          } else if (line.startsWith(":")) this.comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") this.lastId = value;
            else if (field === "event") event.event = value;
            else if (field === "traceparent") event.traceparent = value;
            else if (field === "data") data.push(value);
            else if (field === "retry") this.retry = Number(value);
          }
        }
      });
      res.on("close", done);
      resolveOpen();
    });
    this.request.on("error", done);
  }

  /** Resolves once the status and headers came (or the connection failed). */
  async ready(): Promise<this> {
    await this.opened;
    if (this.status !== 200) await this.closed;
    return this;
  }

  async waitFor(what: string, test: () => boolean, ms = 20_000): Promise<void> {
    const until = Date.now() + ms;
    while (!test()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what} (${this.events.length} events, ended: ${this.ended})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Resolves once the connection has ended. */
  get end(): Promise<void> {
    return this.closed;
  }

  close(): Promise<void> {
    this.response?.destroy();
    this.request.destroy();
    return this.closed;
  }
}

/** Opens a stream on `base` (http://host:port) with the key and the query given (from `localAddress`, e.g. 127.0.0.2). */
export function openStream(base: string, key: string | undefined, query = "", headers: Record<string, string> = {}, localAddress?: string): Promise<SseClient> {
  return new SseClient(`${base}/api/events${query ? `?${query}` : ""}`, { ...(key ? { "X-API-Key": key } : {}), ...headers }, localAddress).ready();
}

/** The stream positions of ids this database sent (decoded with its key), to check their order. */
export async function positionsOf(db: Database, ids: readonly string[]): Promise<EventKey[]> {
  const codec = new EventIds(await syncKey(db));
  return ids.map((id) => {
    const key = codec.decode(id);
    if (typeof key === "string") throw new Error(`not an id of this database (${key}): ${id}`);
    return key;
  });
}

/** Whether the ids are in the stream's order, each once (strictly increasing positions). */
export async function strictlyIncreasing(db: Database, ids: readonly string[]): Promise<boolean> {
  const keys = await positionsOf(db, ids);
  return keys.every((key, i) => i === 0 || compareKeys(keys[i - 1]!, key) < 0);
}

/**
 * Until the event that `where` (an SQL condition over webhook_events) finds has its place in the stream's
 * order (lastEvent: where a stream "from now" starts). On a PostgreSQL server shared with other databases, a
 * transaction still running elsewhere holds committed events back from it for a while.
 */
export async function untilInStreamOrder(db: Database, where: Prisma.Sql, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const [row] = await db.prisma.$queryRaw<{ xid: string; id: string }[]>`
      SELECT "writtenBy"::text AS xid, id::text AS id FROM webhook_events WHERE ${where}`;
    const last = await lastEvent(db);
    if (row && last && compareKeys(last, { xid: BigInt(row.xid), id: BigInt(row.id) }) >= 0) return;
    if (Date.now() > until) throw new Error(`${what} never took its place in the stream's order`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
