/** No slot came free within the wait the caller allowed. */
export class BulkheadTimeout extends Error {
  constructor(readonly waitedMs: number) {
    super(`no slot came free within ${waitedMs} ms`);
    this.name = "BulkheadTimeout";
  }
}

/**
 * At most `limit` holders at once; the others wait their turn, in order, for a
 * bounded time. Used for the full lists: each one in flight holds its answer
 * several times over (PostgreSQL's bytes, the string, the encoded body), so
 * memory is bounded by how many are built and sent at once, not by how many
 * clients ask.
 */
export class Bulkhead {
  private active = 0;
  /** In arrival order (a Set keeps insertion order); a waiter that leaves is removed at once. */
  private readonly waiting = new Set<() => void>();

  constructor(readonly limit: number) {}

  /**
   * Resolves with the slot's release. Rejects with a BulkheadTimeout when no
   * slot came free within `waitMs`, or with the signal's reason when it aborts
   * first (the client left): the waiter then leaves the queue without ever
   * holding a slot.
   */
  acquire(waitMs: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const leave = (reason: Error) => {
        this.waiting.delete(turn);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(reason);
      };
      const onAbort = () => leave(signal!.reason as Error);
      const timer = setTimeout(() => leave(new BulkheadTimeout(waitMs)), waitMs);
      // Called by a release: the slot passes straight on, `active` unchanged.
      const turn = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(this.releaser());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.add(turn);
    });
  }

  /** Holders and waiters right now (metrics). */
  get state(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.size };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.values().next();
      if (next.done) {
        this.active--;
        return;
      }
      this.waiting.delete(next.value);
      next.value();
    };
  }
}
