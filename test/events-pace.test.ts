import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inSlices, ReadPace } from "../src/stream/pace.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { openStream, type SseClient, strictlyIncreasing } from "./helpers/sse.js";

/**
 * GET /api/events with many streams live on one instance (PGlite, or
 * PostgreSQL when DATABASE_URL is set): the tail is then read at a gap
 * (stream/pace.ts), several events going to each stream in one write. Each
 * stream still gets every event once, in the order of the others. The pace
 * itself first: with few streams no gap, with many one later read, not lost;
 * after a hand-out that kept the event loop busy, a gap in proportion.
 */
const STREAMS = 250;
let t: TestApp;
let keyB: string;
let playerId: number;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await startTestApp({ env: { EVENTS_STREAMS_PER_USER: String(STREAMS) } });
  keyB = await t.key("user-B");
  playerId = (await makePlayer(t.database.db.prisma)).id;
});
afterAll(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await t.close();
});

const reward = async (rewardId: number) => {
  const res = await fetch(`${t.url}/api/website/create-reward-log`, {
    method: "POST",
    headers: { "X-API-Key": keyB, "Content-Type": "application/json" },
    body: JSON.stringify({ playerId, rewardId }),
  });
  expect(res.status).toBe(201);
};
const rewardIds = (s: SseClient) => s.events.map((e) => (JSON.parse(e.data) as { data: { rewardId: number } }).data.rewardId);

describe("ReadPace", () => {
  it("when a read is asked within the gap, then it is put off, and the asks meanwhile make one later read; with few streams there is no gap", async () => {
    const pace = new ReadPace();
    try {
      expect(ReadPace.gap(99)).toBe(0);
      expect(ReadPace.gap(1_000)).toBeGreaterThan(0);
      expect(ReadPace.gap(1_000_000)).toBe(ReadPace.gap(100_000));
      expect(pace.ready(10, () => expect.unreachable())).toBe(true);
      expect(pace.ready(10, () => expect.unreachable())).toBe(true);
      let later = 0;
      const asked = new Promise<void>((resolve) => {
        expect(pace.ready(1_000, () => (later++, resolve()))).toBe(false);
        expect(pace.ready(1_000, () => later++)).toBe(false);
      });
      await asked;
      await new Promise((resolve) => setTimeout(resolve, 2 * ReadPace.gap(1_000)));
      expect(later).toBe(1);
      expect(pace.ready(1_000, () => expect.unreachable())).toBe(true);
    } finally {
      pace.stop();
    }
  });

  it("when a hand-out kept the event loop busy, then the next read waits in proportion, up to a bound, however few the streams", async () => {
    expect(ReadPace.gapAfter(0)).toBe(0);
    expect(ReadPace.gapAfter(2)).toBeGreaterThan(2);
    expect(ReadPace.gapAfter(1_000)).toBe(ReadPace.gapAfter(100_000));
    const pace = new ReadPace();
    try {
      expect(pace.ready(10, () => expect.unreachable())).toBe(true);
      pace.handed(2);
      let later = 0;
      await new Promise<void>((resolve) => {
        expect(pace.ready(10, () => (later++, resolve()))).toBe(false);
        expect(pace.ready(10, () => later++)).toBe(false);
      });
      await new Promise((resolve) => setTimeout(resolve, 2 * ReadPace.gapAfter(2)));
      expect(later).toBe(1);
      expect(pace.ready(10, () => expect.unreachable())).toBe(true);
      // A hand-out that cost nothing puts nothing off.
      pace.handed(0);
      expect(pace.ready(10, () => expect.unreachable())).toBe(true);
    } finally {
      pace.stop();
    }
  });

  it("when a fan-out's writes take long, then it is cut in slices that let other work in between, each stream written once, in order", async () => {
    const busyFor = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const written: number[] = [];
    let inBetween = 0;
    const other = setInterval(() => inBetween++, 0);
    try {
      // 200 streams at 0.1 ms each: 20 ms of writes.
      const busy = await inSlices(
        Array.from({ length: 200 }, (_, i) => i),
        (i) => {
          busyFor(0.1);
          written.push(i);
        },
      );
      expect(written).toEqual(Array.from({ length: 200 }, (_, i) => i));
      expect(busy).toBeGreaterThanOrEqual(20);
      // Other work ran while the slices went on (one turn at least per few milliseconds of writes).
      expect(inBetween).toBeGreaterThanOrEqual(5);
    } finally {
      clearInterval(other);
    }
  });
});

describe("GET /api/events, many streams live", () => {
  it("when writes come while hundreds of streams are live, then every stream gets each event once, in one same order", async () => {
    for (let i = 0; i < STREAMS; i += 50) {
      open.push(...(await Promise.all(Array.from({ length: 50 }, () => openStream(t.url, keyB, "types=reward_log.created")))));
    }
    for (const s of open) await s.waitFor("the position", () => s.lastId !== "");
    // Bursts (several commits between two reads of the tail) and single writes in between.
    const written: number[] = [];
    for (let burst = 0; burst < 5; burst++) {
      const ids = Array.from({ length: 8 }, (_, i) => 100 * burst + i + 1);
      await Promise.all(ids.map(reward));
      await reward(100 * burst + 50);
      written.push(...ids, 100 * burst + 50);
    }
    for (const s of open) await s.waitFor(`${written.length} events`, () => s.events.length >= written.length);
    const order = rewardIds(open[0]!);
    expect([...order].sort((x, y) => x - y)).toEqual([...written].sort((x, y) => x - y));
    for (const s of open) {
      expect(s.ended).toBe(false);
      expect(rewardIds(s)).toEqual(order);
      expect(
        await strictlyIncreasing(
          t.database.db,
          s.events.map((e) => e.id),
        ),
      ).toBe(true);
    }
  });
});
