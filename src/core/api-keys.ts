import { hash, randomBytes } from "node:crypto";

/**
 * API keys: `gsk_` followed by 43 base64url characters (256 random bits).
 *
 * Only the SHA-256 of a key is stored. A slow password hash would add nothing:
 * the key is random and long, so its hash cannot be reversed by guessing, and
 * a fast hash lets every request find its user through a unique index.
 */
const API_KEY_PREFIX = "gsk_";
export const API_KEY_PATTERN = /^gsk_[A-Za-z0-9_-]{43}$/;

export interface NewApiKey {
  key: string;
  hash: string;
  /** Prefix plus four characters: enough to tell keys apart in a listing, useless to an attacker. */
  hint: string;
}

export function generateApiKey(): NewApiKey {
  const key = API_KEY_PREFIX + randomBytes(32).toString("base64url");
  return { key, hash: hashApiKey(key), hint: key.slice(0, API_KEY_PREFIX.length + 4) };
}

export function hashApiKey(key: string): string {
  // Every request hashes its key: the one-shot hash costs less than half a createHash chain.
  return hash("sha256", key, "hex");
}

/**
 * What the failed-authentication limit counts a presented key by, in memory
 * and in Redis: 64 bits of a hash kept apart from the stored one (so a
 * database dump cannot name it), enough to tell a network's keys apart and
 * useless to find the key. Nothing presented, or garbage, is one more key.
 */
export function keyFingerprint(key: string | undefined): string {
  return hash("sha256", `rate-limit fingerprint:${key ?? ""}`, "hex").slice(0, 16);
}

/** A key, or the start of one, also when percent-encoded in part or whole (`gsk%5F…`, `%2D` for `-`). */
const KEY_LIKE = /gsk(?:_|%5f)(?:[a-z0-9_-]|%[0-9a-f]{2}){8,}/gi;

/**
 * Text a client chose (a path, a forwarded address) with anything that looks
 * like a key masked: such text goes into log lines and messages, keys must not.
 */
export function maskKeys(text: string): string {
  return text.replace(KEY_LIKE, `${API_KEY_PREFIX}[masked]`);
}

/** Cheap shape check, so that garbage never costs a database lookup. */
export function looksLikeApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}
