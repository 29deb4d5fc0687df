/**
 * While many streams are live, the tail is read at most this often per 100 of them (ms; no gap below 100
 * streams): the events that come in between go to each stream in one write. A fan-out's cost is mostly
 * one socket write per stream, on the writer's side and on its reader's, whatever the write holds: this
 * keeps an instance to about 5,000 stream writes a second (the history of bench/results.md: with 1,000 streams, 1.5 ms
 * per 100 cost 2.1 µs a stream and event and its readers three times what 20 ms does). An event that comes
 * after a quiet spell is read at once.
 */
const GAP_MS_PER_100_STREAMS = 20;
/**
 * The share of the event loop that handing events out may take while they keep coming: after a hand-out
 * that kept the loop busy for B ms, the next read waits B × (1 − share) / share. What a socket write costs
 * varies with the machine and its load (the history of bench/results.md): measured, not assumed.
 */
const HAND_OUT_SHARE = 0.1;
/** The gap at most, whatever the number of streams and the hand-out's cost: what it may add to an event's way. */
const MAX_GAP_MS = 200;

/**
 * A fan-out writes to streams for at most this long (ms) in one turn of the event loop, then lets
 * requests in: each step of a request waiting behind it (a query's answer, a body) waits at most this.
 * A write to a stream costs 10–20 µs: some thirty streams a turn.
 */
const SLICE_MS = 0.5;

/** Calls `each` on every item, SLICE_MS at a time, the event loop free between slices; what the slices took in all (ms). */
export async function inSlices<T>(items: readonly T[], each: (item: T) => void): Promise<number> {
  let busy = 0;
  let start = performance.now();
  for (let i = 0; i < items.length; i++) {
    each(items[i]!);
    const now = performance.now();
    if (now - start >= SLICE_MS && i + 1 < items.length) {
      busy += now - start;
      await new Promise((resolve) => setImmediate(resolve));
      start = performance.now();
    }
  }
  return busy + performance.now() - start;
}

/** When the hub's tail may be read next (stream/hub.ts): a gap after the last read, by the number of live streams and the last hand-out's cost. */
export class ReadPace {
  /** When the last read began. */
  private last = -Infinity;
  /** Not before then, by what the last hand-out cost. */
  private notBefore = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  /** The gap between the starts of two reads with this many streams live. */
  static gap(streams: number): number {
    return Math.min(MAX_GAP_MS, Math.floor(streams / 100) * GAP_MS_PER_100_STREAMS);
  }

  /** The gap after a hand-out that kept the event loop busy for `busyMs`. */
  static gapAfter(busyMs: number): number {
    return Math.min(MAX_GAP_MS, (busyMs * (1 - HAND_OUT_SHARE)) / HAND_OUT_SHARE);
  }

  /**
   * Whether a read may begin now (taken as begun when so); if not, `later` is called once the gap has
   * passed (once however often asked meanwhile).
   */
  ready(streams: number, later: () => void): boolean {
    if (this.timer) return false;
    const now = performance.now();
    const wait = Math.max(this.last + ReadPace.gap(streams), this.notBefore) - now;
    if (wait <= 0) {
      this.last = now;
      return true;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      later();
    }, wait);
    this.timer.unref();
    return false;
  }

  /** A batch of events was handed out, keeping the event loop busy for `busyMs` in all: the next read waits at least gapAfter(busyMs) from now. */
  handed(busyMs: number): void {
    this.notBefore = Math.max(this.notBefore, performance.now() + ReadPace.gapAfter(busyMs));
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
