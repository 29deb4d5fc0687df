import { setTimeout as sleep } from "node:timers/promises";

/** Catch-up reads running at once on an instance: the others wait their turn. */
const INSTANCE_LIMIT = 2;
/** Catch-up reads of one API user running at once, whatever its number of streams. */
const USER_LIMIT = 1;
/**
 * The share of its turn a catch-up read may take: after a read (the query, and its page framed) that took
 * B ms, its turn is held B × (1 − share) / share longer. Two turns at 20 %: replays take at most about 40 %
 * of an instance's time, and of its database connections, whatever their number (bench/replay.ts).
 */
const SHARE = 0.2;

/**
 * The turns of streams catching up (a resume, a replay from far back): one
 * page of the outbox at a time per API user, two at a time per instance, the
 * others waiting in the order they came, each turn paced by what its read
 * cost. Each page is bounded work (outbox.ts, eventsBetween): however many
 * replays run, the other callers' requests keep most of the instance and its
 * database. A small page (a reconnection's few events) costs a small pause.
 */
export class CatchUpGate {
  private running = 0;
  private readonly perUser = new Map<number, number>();
  private readonly waiting: { userId: number; start: () => void }[] = [];

  async run<T>(userId: number, read: () => Promise<T>): Promise<T> {
    if (this.free(userId)) this.take(userId);
    else await new Promise<void>((start) => this.waiting.push({ userId, start }));
    const started = performance.now();
    try {
      return await read();
    } finally {
      void sleep(((performance.now() - started) * (1 - SHARE)) / SHARE, undefined, { ref: false }).then(() => this.release(userId));
    }
  }

  private free(userId: number): boolean {
    return this.running < INSTANCE_LIMIT && (this.perUser.get(userId) ?? 0) < USER_LIMIT;
  }

  private take(userId: number): void {
    this.running++;
    this.perUser.set(userId, (this.perUser.get(userId) ?? 0) + 1);
  }

  private release(userId: number): void {
    this.running--;
    const left = this.perUser.get(userId)! - 1;
    if (left > 0) this.perUser.set(userId, left);
    else this.perUser.delete(userId);
    const next = this.waiting.findIndex((w) => this.free(w.userId));
    if (next >= 0) {
      const [turn] = this.waiting.splice(next, 1);
      this.take(turn!.userId);
      turn!.start();
    }
  }
}
