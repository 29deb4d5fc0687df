/**
 * An event's place in the stream (GET /api/events): the transaction that
 * wrote it, then its row id. Sent as the SSE id: 32 hex digits (16 each),
 * opaque to clients, increasing in the stream's order, text order included.
 */
export interface EventKey {
  xid: bigint;
  id: bigint;
}

/** Before every event: the position of a stream opened on an empty outbox. */
export const ZERO_KEY: EventKey = { xid: 0n, id: 0n };

const ID = /^[0-9a-f]{32}$/;

export function encodeEventId(key: EventKey): string {
  return key.xid.toString(16).padStart(16, "0") + key.id.toString(16).padStart(16, "0");
}

/** The key of an id this service sent; undefined for anything else. */
export function decodeEventId(text: string): EventKey | undefined {
  if (!ID.test(text)) return undefined;
  const key = { xid: BigInt(`0x${text.slice(0, 16)}`), id: BigInt(`0x${text.slice(16)}`) };
  // Both are PostgreSQL bigints.
  return key.xid < 2n ** 63n && key.id < 2n ** 63n ? key : undefined;
}

export function compareKeys(a: EventKey, b: EventKey): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}
