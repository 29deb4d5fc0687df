import { contextOf, inSpan, tracing } from "../core/tracing.js";
import { compareKeys, type EventKey } from "./event-id.js";
import type { StreamEvent } from "./outbox.js";

/** Bytes of frames at most in one batch (but one event, whatever its size): what a slow reader may hold over its buffer. */
const BATCH_BYTES = 65_536;

const topicSets = new Map<string, ReadonlySet<string>>();

/**
 * The set of these topics (stream/topics.ts), one object for every stream
 * that may see the same ones (in any order): held once, and a batch's bytes
 * for them are built once for all of them (Batch.of).
 */
export function topicSet(topics: Iterable<string>): ReadonlySet<string> {
  const sorted = [...new Set(topics)].sort();
  const name = sorted.join(",");
  let set = topicSets.get(name);
  if (!set) topicSets.set(name, (set = new Set(sorted)));
  return set;
}

/** Frames as a stream sends them: the body's bytes (raw), the same as one HTTP chunk, and the last event among them. */
interface Framed {
  raw: Buffer;
  chunked: Buffer;
  last: EventKey;
}

const CRLF = Buffer.from("\r\n", "latin1");

/** The events of these topics among `events` (and after `after`), framed; undefined when none is. */
function frame(events: readonly StreamEvent[], topics: ReadonlySet<string>, after?: EventKey): Framed | undefined {
  let text = "";
  let last: EventKey | undefined;
  for (const event of events) {
    if (!topics.has(event.topic) || (after && compareKeys(event.key, after) <= 0)) continue;
    text += event.frame;
    last = event.key;
  }
  if (!last) return undefined;
  const raw = Buffer.from(text, "utf8");
  return { raw, chunked: Buffer.concat([Buffer.from(`${raw.length.toString(16)}\r\n`, "latin1"), raw, CRLF]), last };
}

/**
 * Events read by the tail at once, in order, as every live stream sends
 * them: their frames are encoded once per set of topics, not once
 * per stream.
 */
export class Batch {
  private readonly framed = new Map<ReadonlySet<string>, Framed | undefined>();

  constructor(readonly events: readonly StreamEvent[]) {}

  get first(): EventKey {
    return this.events[0]!.key;
  }

  get last(): EventKey {
    return this.events.at(-1)!.key;
  }

  /** The events of these topics, framed (once for every stream of these topics); undefined when none is of them. */
  of(topics: ReadonlySet<string>): Framed | undefined {
    if (!this.framed.has(topics)) this.framed.set(topics, frame(this.events, topics));
    return this.framed.get(topics);
  }

  /** The events of these topics after `after`: a stream that went live within the batch (its own bytes). */
  after(after: EventKey, topics: ReadonlySet<string>): Framed | undefined {
    return frame(this.events, topics, after);
  }
}

/** A page of events cut into batches of BATCH_BYTES at most (or of one event larger than that). */
export function* batches(events: readonly StreamEvent[]): Generator<Batch> {
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < events.length; i++) {
    const size = events[i]!.frame.length;
    if (i > start && bytes + size > BATCH_BYTES) {
      yield new Batch(events.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start < events.length) yield new Batch(events.slice(start));
}

/**
 * Tracing on (core/tracing.ts): handing a batch to the streams is an `events.fan_out` span, of its own trace,
 * linked to the traces of the writes whose events it carries. Off: the work alone.
 */
export function fanOutSpan<T>(batch: Batch, streams: number, work: () => Promise<T>): Promise<T> {
  if (!tracing.on) return work();
  const attributes = { "events.count": batch.events.length, "events.streams": streams };
  // A root: a batch holds the events of many writes (and a write's own request may have woken the reader).
  return inSpan("events.fan_out", attributes, work, { parent: contextOf(null), links: batch.events.map((e) => e.traceparent) });
}
