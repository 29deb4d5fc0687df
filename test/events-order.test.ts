import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../src/generated/prisma/client.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { openStream, type SseClient, untilInStreamOrder } from "./helpers/sse.js";

/**
 * GET /api/events when one transaction writes many events (an import, the
 * seed): one order on every path. A stream that resumes after any of them,
 * with or without `?types=`, gets exactly the rest, once, in order; ids cross
 * a power of ten inside the transaction, where text order and number order
 * part (issue 37).
 */
let t: TestApp;
let keyB: string;
const open: SseClient[] = [];

const stream = async (query = "", headers: Record<string, string> = {}) => {
  const s = await openStream(t.url, keyB, query, headers);
  open.push(s);
  expect(s.status).toBe(200);
  return s;
};
/** The `n` of each event's data, in the order received. */
const ns = (s: SseClient) => s.events.map((e) => (JSON.parse(e.data) as { data: { n: number } }).data.n);

beforeAll(async () => {
  t = await startTestApp();
  keyB = await t.key("user-B");
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await t.close();
});

/**
 * Writes `count` events in one transaction, their ids crossing the next power of ten of the outbox's
 * sequence: numbered from `first`, reward logs and cosmetic updates alternating (even n: reward log).
 */
async function oneTransaction(count: number, first: number): Promise<void> {
  const prisma = t.database.db.prisma;
  const [row] = await prisma.$queryRaw<{ last: bigint }[]>`SELECT last_value AS last FROM webhook_events_id_seq`;
  const last = row!.last;
  const power = 10n ** BigInt(String(last + BigInt(count)).length);
  await prisma.$transaction([
    prisma.$queryRaw`SELECT setval('webhook_events_id_seq', ${power - BigInt(Math.floor(count / 3))})`,
    prisma.$executeRaw`
      INSERT INTO webhook_events (type, data)
      SELECT CASE WHEN n % 2 = 0 THEN 'reward_log.created' ELSE 'cosmetic.updated' END, json_build_object('n', n)::text
        FROM generate_series(${first}::int, ${first + count - 1}::int) n ORDER BY n`,
  ]);
}

/** A reward log event written alone: it marks the end of what a stream is to get. */
let markers = 0;
async function marker(): Promise<number> {
  const n = -++markers;
  await t.database.db.prisma.$executeRaw`INSERT INTO webhook_events (type, data) VALUES ('reward_log.created', ${JSON.stringify({ n })})`;
  return n;
}

describe.each([25, 1000])("GET /api/events after one transaction of %i events", (count) => {
  let live: SseClient;
  let first: number;

  beforeAll(async () => {
    first = count * 10;
    live = await openStream(t.url, keyB, "types=reward_log.created,cosmetic.updated");
    await live.waitFor("the position", () => live.lastId !== "");
    await oneTransaction(count, first);
    await live.waitFor(`${count} events`, () => live.events.length >= count, 30_000);
  });
  afterAll(async () => {
    await live.close();
  });

  const all = () => Array.from({ length: count }, (_, i) => first + i);

  it("when streaming live, then every event comes once, in the order written", () => {
    expect(ns(live)).toEqual(all());
  });

  it("when a stream resumes after any event inside the transaction, then it gets exactly the rest, once, in order", async () => {
    const positions = [0, 1, 8, 9, 10, Math.floor(count / 3) - 1, Math.floor(count / 2), count - 2, count - 1];
    for (const at of new Set(positions)) {
      const end = await marker();
      const resumed = await stream("", { "Last-Event-ID": live.events[at]!.id });
      await resumed.waitFor(`the marker after ${at}`, () => ns(resumed).includes(end), 30_000);
      expect(ns(resumed).filter((n) => n >= 0)).toEqual(all().slice(at + 1));
      await resumed.close();
    }
  });

  it("when a stream of one type resumes after any event inside the transaction, then it gets exactly the rest of that type, once, in order", async () => {
    const rewards = live.events.filter((e) => e.event === "reward_log.created");
    const values = all().filter((n) => n % 2 === 0);
    for (const at of new Set([0, 4, 5, 9, rewards.length - 2, rewards.length - 1])) {
      const end = await marker();
      const resumed = await stream("types=reward_log.created", { "Last-Event-ID": rewards[at]!.id });
      await resumed.waitFor(`the marker after ${at}`, () => ns(resumed).includes(end), 30_000);
      expect(ns(resumed).filter((n) => n >= 0)).toEqual(values.slice(at + 1));
      await resumed.close();
    }
  });

  it("when a stream of one type resumes after an event of another type inside the transaction, then it gets the rest of its type", async () => {
    const at = 10;
    const end = await marker();
    const resumed = await stream("types=reward_log.created", { "Last-Event-ID": live.events[at + 1]!.id });
    await resumed.waitFor("the marker", () => ns(resumed).includes(end), 30_000);
    expect(ns(resumed).filter((n) => n >= 0)).toEqual(
      all()
        .slice(at + 2)
        .filter((n) => n % 2 === 0),
    );
  });
});

describe("GET /api/events from now, after one transaction of many events", () => {
  it("when no stream was open during the transaction, then a stream opened after it gets none of its events", async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    await waitUntil(() => t.events.size === 0);
    await oneTransaction(30, 100_000);
    // "From now" is from the last event in the stream's order: on a PostgreSQL server shared with other
    // databases, a transaction still running elsewhere holds the committed ones back from it for a while.
    await untilInStreamOrder(t.database.db, Prisma.sql`(data::jsonb ->> 'n')::int = ${100_029}`, "the transaction's last event");
    const s = await stream("types=reward_log.created,cosmetic.updated");
    await s.waitFor("the position", () => s.lastId !== "");
    const end = await marker();
    await s.waitFor("the marker", () => ns(s).includes(end), 30_000);
    expect(ns(s)).toEqual([end]);
  });
});

async function waitUntil(test: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
