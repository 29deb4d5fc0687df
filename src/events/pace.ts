/**
 * While many streams are live, the tail is read at most this often per 100 of them (ms; no gap below 100
 * streams): the events that come in between go to each stream in one write, a fan-out's cost being mostly
 * one socket write per stream. An event that comes after a quiet spell is read at once.
 */
const GAP_MS_PER_100_STREAMS = 1.5;
/** The gap at most, whatever the number of streams: what it may add to an event's way. */
const MAX_GAP_MS = 25;

/** When the hub's tail may be read next (events/hub.ts): the gap after the last read, by the number of live streams. */
export class ReadPace {
  private last = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  /** The gap between reads with this many streams live. */
  static gap(streams: number): number {
    return Math.min(MAX_GAP_MS, Math.floor(streams / 100) * GAP_MS_PER_100_STREAMS);
  }

  /**
   * Whether a read may begin now (taken as begun when so); if not, `later` is called once the gap has
   * passed (once however often asked meanwhile).
   */
  ready(streams: number, later: () => void): boolean {
    if (this.timer) return false;
    const now = performance.now();
    const wait = this.last + ReadPace.gap(streams) - now;
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

  stop(): void {
    clearTimeout(this.timer);
  }
}
