import { createCipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { databaseTag } from "../lists/list-params.js";

/**
 * An event's place in the stream (GET /api/events): the transaction that
 * wrote it, then its row id. Never sent as it is: clients get it sealed and
 * encrypted (EventIds).
 */
export interface EventKey {
  xid: bigint;
  id: bigint;
}

/** A resume point as a client sent it: the id, and the header or parameter it came in (named in the answer to a bad one). */
export interface SentEventId {
  id: string;
  parameter: "Last-Event-ID" | "lastEventId";
}

/** Where a stream starts: after an event a client sent (SentEventId), or at a moment (`startAt`, the service's clock). */
export type StreamStart = SentEventId | { startAt: Date };

/** Before every event: the position of a stream opened on an empty outbox. */
export const ZERO_KEY: EventKey = { xid: 0n, id: 0n };

export function compareKeys(a: EventKey, b: EventKey): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

const B64 = "[A-Za-z0-9_-]";
/** An event's id: the database's tag (11), then 32 bytes (43): SIV, and the key encrypted. */
const EVENT_CHARS = 54;
/** A position's id (the start, a heartbeat): the same with 8 random bytes more (65 in all). */
const POSITION_CHARS = 65;
/** What an id this service sends looks like; whether it is one is known once the database's key is read (EventIds.decode). */
export const EVENT_ID = new RegExp(`^(?:${B64}{${EVENT_CHARS}}|${B64}{${POSITION_CHARS}})$`);
/** The ids sent before they were sealed (until 2026-11-29): 32 hex digits, the key in the clear. */
export const UNSEALED_EVENT_ID = /^[0-9a-f]{32}$/;

const TAG_CHARS = 11;
const IV_BYTES = 16;
const SALT_BYTES = 8;
const MAX_BIGINT = 2n ** 63n;

/**
 * The ids of the stream's events under the database's sync key (the key that
 * seals sync tokens, migration 20261125100000_sync_identity): the database's
 * tag, then the position encrypted (AES-256-CTR) under a synthetic IV that is
 * its MAC (HMAC-SHA256, the SIV construction). An id of another database, or
 * of this one before a restore, has another tag (410); one altered fails its
 * MAC (400). Encrypted, an id tells nothing of the events between two (how
 * many others, of types the caller may not see): an event's id is the same
 * text every time it is sent, a position's a new one each time (salted).
 */
export class EventIds {
  private readonly tag: string;
  /** AES-256 on single blocks: the CTR keystream, made here (one cipher for every id: a stream catching up frames thousands). */
  private readonly blocks: ReturnType<typeof createCipheriv>;
  private readonly macKey: Buffer;

  constructor(syncKey: Buffer) {
    this.tag = databaseTag(syncKey);
    this.blocks = createCipheriv("aes-256-ecb", createHmac("sha256", syncKey).update("event-id cipher").digest(), null).setAutoPadding(false);
    this.macKey = createHmac("sha256", syncKey).update("event-id mac").digest();
  }

  /** The id of an event: the same text every time. */
  event(key: EventKey): string {
    return this.seal(plain(key, 0));
  }

  /** The id of a position that is no event's (the start, a heartbeat): another text each time. */
  position(key: EventKey): string {
    return this.seal(plain(key, SALT_BYTES));
  }

  /** The key of an id this database sent; what is wrong with it otherwise. */
  decode(text: string): EventKey | "other-database" | "altered" {
    if (!EVENT_ID.test(text)) return "altered";
    if (text.slice(0, TAG_CHARS) !== this.tag) return "other-database";
    const raw = Buffer.from(text.slice(TAG_CHARS), "base64url");
    const iv = raw.subarray(0, IV_BYTES);
    const bytes = this.ctr(iv, raw.subarray(IV_BYTES));
    if (!timingSafeEqual(this.mac(bytes), iv)) return "altered";
    const key = { xid: bytes.readBigUInt64BE(0), id: bytes.readBigUInt64BE(8) };
    return key.xid < MAX_BIGINT && key.id < MAX_BIGINT ? key : "altered";
  }

  private seal(bytes: Buffer): string {
    const iv = this.mac(bytes);
    return this.tag + Buffer.concat([iv, this.ctr(iv, bytes)]).toString("base64url");
  }

  /** AES-256-CTR (NIST SP 800-38A): `bytes` XOR the cipher of iv, iv + 1 (the counter its last 8 bytes); its own inverse. */
  private ctr(iv: Buffer, bytes: Buffer): Buffer {
    const counters = Buffer.alloc(Math.ceil(bytes.length / 16) * 16);
    for (let i = 0; i < counters.length; i += 16) {
      iv.copy(counters, i);
      counters.writeBigUInt64BE(BigInt.asUintN(64, iv.readBigUInt64BE(8) + BigInt(i / 16)), i + 8);
    }
    const stream = this.blocks.update(counters);
    const out = Buffer.allocUnsafe(bytes.length);
    for (let i = 0; i < bytes.length; i++) out[i] = bytes[i]! ^ stream[i]!;
    return out;
  }

  private mac(bytes: Buffer): Buffer {
    return createHmac("sha256", this.macKey).update(bytes).digest().subarray(0, IV_BYTES);
  }
}

/** The key as 16 bytes, then `salt` random bytes. */
function plain(key: EventKey, salt: number): Buffer {
  const bytes = Buffer.alloc(16 + salt);
  bytes.writeBigUInt64BE(key.xid, 0);
  bytes.writeBigUInt64BE(key.id, 8);
  if (salt > 0) randomBytes(salt).copy(bytes, 16);
  return bytes;
}
