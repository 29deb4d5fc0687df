/** No slot came free within the wait the caller allowed. */
export class BulkheadTimeout extends Error {
  constructor(readonly waitedMs: number) {
    super(`no slot came free within ${waitedMs} ms`);
    this.name = "BulkheadTimeout";
  }
}

interface Waiter {
  owner: string;
  /** Called by a release: the slot passes straight on, `active` unchanged. */
  grant: () => void;
}

/**
 * At most `limit` holders at once, and at most `perOwner` of them for one
 * owner (an API user), so that no single caller can take every slot; the
 * others wait their turn, in order, for a bounded time. Used for the full
 * lists: each one in flight holds its answer several times over (PostgreSQL's
 * bytes, the string, the encoded body), so memory is bounded by how many are
 * built and sent at once, not by how many clients ask.
 */
export class Bulkhead {
  private active = 0;
  private readonly held = new Map<string, number>();
  /** In arrival order (a Set keeps insertion order); a waiter that leaves is removed at once. */
  private readonly waiting = new Set<Waiter>();

  constructor(
    readonly limit: number,
    readonly perOwner: number = limit,
  ) {}

  /**
   * Resolves with the slot's release. Rejects with a BulkheadTimeout when no
   * slot came free within `waitMs`, or with the signal's reason when it aborts
   * first (the client left): the waiter then leaves the queue without ever
   * holding a slot.
   */
  acquire(waitMs: number, signal?: AbortSignal, owner = ""): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.active < this.limit && this.mayHold(owner)) {
      this.active++;
      return Promise.resolve(this.releaser(owner));
    }
    return new Promise((resolve, reject) => {
      const leave = (reason: Error) => {
        this.waiting.delete(waiter);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(reason);
      };
      const onAbort = () => leave(signal!.reason as Error);
      const timer = setTimeout(() => leave(new BulkheadTimeout(waitMs)), waitMs);
      const waiter: Waiter = {
        owner,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(this.releaser(owner));
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.add(waiter);
    });
  }

  /** Holders and waiters right now (metrics). */
  get state(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.size };
  }

  private mayHold(owner: string): boolean {
    return (this.held.get(owner) ?? 0) < this.perOwner;
  }

  private releaser(owner: string): () => void {
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held.get(owner)! - 1;
      if (left === 0) this.held.delete(owner);
      else this.held.set(owner, left);
      // The first waiter in line whose owner may hold one more takes the slot; others keep their place.
      for (const next of this.waiting) {
        if (!this.mayHold(next.owner)) continue;
        this.waiting.delete(next);
        next.grant();
        return;
      }
      this.active--;
    };
  }
}
