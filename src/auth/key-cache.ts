import type { Caller } from "./caller.js";

/**
 * Authenticated keys kept in memory, by hash, so that a request costs no
 * database lookup for its key. Correctness rests on invalidation: every
 * revocation or rotation notifies all instances (PostgreSQL NOTIFY on
 * `api_user_changed`, see key-invalidation.ts), which drop the user's keys at
 * once. While that channel is down the cache is off, so a revocation can never
 * be missed; entries also expire after `ttlMs` as a last resort.
 * Unknown keys are never cached: a key created a moment ago must work.
 */
export class KeyCache {
  private readonly entries = new Map<string, { caller: Caller; expires: number }>();
  private enabled: boolean;
  /**
   * Moves on at every invalidation: a lookup that began before one (it may
   * have read a key since revoked) must not put its answer in the cache.
   */
  private generation = 0;

  constructor(
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
    enabled = true,
  ) {
    this.enabled = enabled;
  }

  get(hash: string): Caller | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.caller;
  }

  /** What a lookup notes before it reads the database, and hands to set(). */
  get version(): number {
    return this.generation;
  }

  /**
   * `until` (epoch ms): when the key stops working (a rotated-away key's grace period), if sooner than the time to live.
   * `version`: this.version when the lookup began; if an invalidation came since, nothing is cached.
   */
  set(hash: string, caller: Caller, until: number | undefined, version: number): void {
    if (!this.enabled || version !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const expires = Date.now() + this.ttlMs;
    this.entries.set(hash, { caller, expires: until === undefined ? expires : Math.min(expires, until) });
  }

  /** Drops every key of this user (usernames compare case-insensitively). */
  forgetUser(username: string): void {
    this.generation++;
    const name = username.toLowerCase();
    for (const [hash, entry] of this.entries) {
      if (entry.caller.username.toLowerCase() === name) this.entries.delete(hash);
    }
  }

  /** Turns caching off (and forgets everything) or back on. */
  setEnabled(enabled: boolean): void {
    this.generation++;
    this.enabled = enabled;
    this.entries.clear();
  }
}

/**
 * Hashes of keys known not to authenticate (unknown or revoked), so that a
 * client looping on a bad key costs no database lookup. No invalidation is
 * needed: a revoked key's hash never becomes valid again (rotation and
 * creation issue new random 256-bit keys), and a key created later cannot
 * already be here. Bounded by size (oldest first out) and by age, should an
 * operator restore an older database.
 */
export class RefusedKeys {
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  has(hash: string): boolean {
    const expires = this.entries.get(hash);
    if (expires === undefined) return false;
    if (expires > Date.now()) return true;
    this.entries.delete(hash);
    return false;
  }

  add(hash: string): void {
    this.entries.delete(hash);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, Date.now() + this.ttlMs);
  }
}
