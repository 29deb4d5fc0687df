import { HEARTBEAT_MS } from "./stream.js";

/** Streams get their heartbeats in this many groups, one group at a time: no burst of thousands of writes at once. */
const GROUPS = 10;

/** The heartbeats of an instance's streams: one timer, beating one group every HEARTBEAT_MS / GROUPS. */
export class Heartbeats {
  private readonly groups = Array.from({ length: GROUPS }, () => new Set<{ beat(): void }>());
  private next = 0;
  private turn = 0;
  private timer: NodeJS.Timeout | undefined;

  /** Beats the stream from now on; returns what stops it. */
  add(stream: { beat(): void }): () => void {
    const group = this.groups[this.next++ % GROUPS]!;
    group.add(stream);
    this.timer ??= setInterval(() => {
      for (const s of this.groups[this.turn++ % GROUPS]!) s.beat();
    }, HEARTBEAT_MS / GROUPS).unref();
    return () => group.delete(stream);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
