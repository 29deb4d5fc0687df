import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../src/generated/prisma/client.js";
import { EVENTS_CHANNEL } from "../src/stream/channels.js";
import { compareKeys, EVENT_ID } from "../src/stream/event-id.js";
import { EventHub } from "../src/stream/hub.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { EXPIRED_EVENT_ID, openStream, positionsOf, type SseClient, strictlyIncreasing, untilInStreamOrder } from "./helpers/sse.js";

/**
 * GET /api/events in one process (PGlite, or PostgreSQL when DATABASE_URL is
 * set): events as the API's writes commit, resuming, who may see what, the
 * limits. Across instances: events-instances.test.ts.
 */
let t: TestApp;
let keyB: string;
let keyC: string;
let playerId: number;
const open: SseClient[] = [];

const stream = async (key: string | undefined, query = "", headers: Record<string, string> = {}) => {
  const s = await openStream(t.url, key, query, headers);
  open.push(s);
  return s;
};
let nextReward = 1;
const reward = async (rewardId = nextReward++) => {
  const res = await fetch(`${t.url}/api/website/create-reward-log`, {
    method: "POST",
    headers: { "X-API-Key": keyB, "Content-Type": "application/json" },
    body: JSON.stringify({ playerId, rewardId }),
  });
  expect(res.status).toBe(201);
  return rewardId;
};
const rewardIds = (s: SseClient) =>
  s.events.filter((e) => e.event === "reward_log.created").map((e) => (JSON.parse(e.data) as { data: { rewardId: number } }).data.rewardId);

beforeAll(async () => {
  t = await startTestApp({ env: { EVENTS_STREAMS_PER_USER: "3" } });
  keyB = await t.key("user-B");
  keyC = await t.key("user-C");
  playerId = (await makePlayer(t.database.db.prisma)).id;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await t.close();
});

describe("GET /api/events", () => {
  it("when writes commit, then each comes as an event: increasing id, its type, the webhook body as data; a retry hint and the position first", async () => {
    const s = await stream(keyB, "types=reward_log.created");
    expect(s.status).toBe(200);
    expect(s.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(s.headers["cache-control"]).toBe("no-cache, no-transform");
    await s.waitFor("the position", () => s.lastId !== "");
    expect(s.retry).toBe(2000);
    expect(s.lastId).toMatch(EVENT_ID);
    const first = s.lastId;
    const ids = [await reward(), await reward(), await reward()];
    await s.waitFor("three events", () => s.events.length === 3);
    expect(rewardIds(s)).toEqual(ids);
    const body = JSON.parse(s.events[0]!.data) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["type", "timestamp", "data"]);
    expect(body).toMatchObject({ type: "reward_log.created", data: { playerId, rewardId: ids[0] } });
    // The same bytes a webhook receiver gets: the record as the API answers it, in its field order.
    expect(Object.keys(body.data as object)).toEqual(["id", "playerId", "rewardId", "rewardedAt"]);
    expect(
      await strictlyIncreasing(
        t.database.db,
        s.events.map((e) => e.id),
      ),
    ).toBe(true);
    // The position first, then the events after it.
    const [start, next] = await positionsOf(t.database.db, [first, s.events[0]!.id]);
    expect(compareKeys(start!, next!)).toBeLessThan(0);
  });

  it("when writes commit while no stream is open, then a stream opened after them starts after them, and a resume from before still gets them", async () => {
    const before = await stream(keyB, "types=reward_log.created");
    await before.waitFor("the position", () => before.lastId !== "");
    await before.close();
    await waitUntil(() => t.events.size === 0);
    const meanwhile = [await reward(), await reward(), await reward()];
    // "From now" is from the last event in the stream's order: on PostgreSQL a transaction still running
    // anywhere on the server (another database's, in CI) holds committed events back from it for a while.
    await untilInStreamOrder(
      t.database.db,
      Prisma.sql`type = 'reward_log.created' AND (data::jsonb ->> 'rewardId')::int = ${meanwhile.at(-1)!}`,
      `reward ${meanwhile.at(-1)!}'s event`,
    );
    const s = await stream(keyB, "types=reward_log.created");
    await s.waitFor("the position", () => s.lastId !== "");
    const later = await reward();
    const resumed = await stream(keyB, "types=reward_log.created", { "Last-Event-ID": before.lastId });
    await resumed.waitFor("four events", () => resumed.events.length >= 4);
    await s.waitFor("one event", () => s.events.length >= 1);
    expect(rewardIds(resumed)).toEqual([...meanwhile, later]);
    expect(rewardIds(s)).toEqual([later]);
  });

  it("when a write commits its event, then its instance announces it on LISTEN webhook_events, which every instance's streams wake on", async () => {
    const rewardId = 900_001;
    const visible: boolean[] = [];
    const heard = await t.database.db.subscribe(EVENTS_CHANNEL, {
      message: () =>
        void t.database.db.prisma.$queryRaw<unknown[]>`SELECT 1 FROM webhook_events WHERE (data::jsonb ->> 'rewardId')::int = ${rewardId}`.then((rows) =>
          visible.push(rows.length === 1),
        ),
      lost: () => undefined,
    });
    try {
      await reward(rewardId);
      // Announced after its commit: whoever hears it reads the event.
      await waitUntil(() => visible.includes(true));
    } finally {
      await heard.close();
    }
  });

  it("when a client reconnects with Last-Event-ID (or lastEventId), then every event since comes, once, in order", async () => {
    const s = await stream(keyB, "types=reward_log.created");
    await s.waitFor("the position", () => s.lastId !== "");
    const before = [await reward(), await reward()];
    // Its own two: on a PostgreSQL server shared with other databases, an earlier test's event may come first
    // (a transaction elsewhere held it back while this stream opened).
    await s.waitFor("its two events", () => before.every((id) => rewardIds(s).includes(id)));
    const resumeFrom = s.events[rewardIds(s).indexOf(before[0]!)]!.id;
    await s.close();
    const after = [await reward(), await reward()];
    const byHeader = await stream(keyB, "types=reward_log.created", { "Last-Event-ID": resumeFrom });
    const byQuery = await stream(keyB, `types=reward_log.created&lastEventId=${resumeFrom}`);
    for (const resumed of [byHeader, byQuery]) {
      await resumed.waitFor("three events", () => resumed.events.length >= 3);
      expect(rewardIds(resumed)).toEqual([before[1], ...after]);
    }
    // Then live, without a gap or a repeat.
    const live = await reward();
    await byHeader.waitFor("the live event", () => byHeader.events.length === 4);
    expect(rewardIds(byHeader)).toEqual([before[1], ...after, live]);
  });

  it.skipIf(!onPostgres)(
    "when an event commits after a later one was written, then neither is sent before both can be, and a resume misses neither",
    async () => {
      const s = await stream(keyB, "types=reward_log.created");
      await s.waitFor("the position", () => s.lastId !== "");
      const prisma = t.database.db.prisma;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let began!: () => void;
      const begun = new Promise<void>((r) => (began = r));
      // A transaction that writes its event first, and commits last.
      const slow = prisma.$transaction(
        async (tx) => {
          await tx.$executeRaw`INSERT INTO webhook_events (type, data) VALUES ('reward_log.created', '{"rewardId":-1}')`;
          began();
          await held;
        },
        { timeout: 20_000 },
      );
      await begun;
      const fast = await reward();
      await new Promise((r) => setTimeout(r, 300));
      expect(s.events).toEqual([]);
      release();
      await slow;
      await s.waitFor("both events", () => s.events.length === 2);
      expect(s.events.map((e) => (JSON.parse(e.data) as { data: { rewardId: number } }).data.rewardId)).toEqual([-1, fast]);
    },
  );

  it("when the resume point is past the retention or not from this database, then 410 before the stream starts", async () => {
    const s = await stream(keyB, "", { "Last-Event-ID": EXPIRED_EVENT_ID });
    expect(s.status).toBe(410);
    expect(JSON.parse(s.body)).toEqual({
      code: 410,
      message: expect.stringMatching(/^Last-Event-ID: the stream cannot resume after this event: not from this database/),
    });
    // An event whose time is past the retention (30 days).
    const live = await stream(keyB, "types=reward_log.created");
    await reward();
    await live.waitFor("an event", () => live.events.length === 1);
    const [position] = await positionsOf(t.database.db, [live.events[0]!.id]);
    await t.database.db.prisma.$executeRaw`UPDATE webhook_events SET "createdAt" = now() - interval '30 days' WHERE id = ${position!.id}`;
    const expired = await stream(keyB, "", { "Last-Event-ID": live.events[0]!.id });
    expect(expired.status).toBe(410);
    expect(JSON.parse(expired.body).message).toMatch(/^Last-Event-ID: the stream cannot resume after this event: its event is past the retention/);
  });

  it("when a stream asks for the events since a moment (a client without a saved id, started while the service was down), then each from that moment comes, once, in order, then the live ones", async () => {
    const [before, first, second] = [await reward(), await reward(), await reward()];
    // The events up to the first reward an hour back, by the service's clock: startAt= half an hour back splits them for certain.
    const moved = await t.database.db.prisma.$executeRaw`
      UPDATE webhook_events SET "createdAt" = now() - interval '1 hour'
       WHERE ("writtenBy", id) <= (SELECT "writtenBy", id FROM webhook_events WHERE type = 'reward_log.created' AND (data::jsonb ->> 'rewardId')::int = ${before})`;
    expect(moved).toBeGreaterThan(0);
    const [{ at }] = (await t.database.db.prisma.$queryRaw<{ at: Date }[]>`SELECT now() - interval '30 minutes' AS at`) as [{ at: Date }];
    const s = await stream(keyB, `types=reward_log.created&startAt=${encodeURIComponent(at.toISOString())}`);
    expect(s.status).toBe(200);
    await s.waitFor("the two events since", () => rewardIds(s).length === 2);
    const live = await reward();
    await s.waitFor("the live one", () => rewardIds(s).length === 3);
    expect(rewardIds(s)).toEqual([first, second, live]);
    expect(
      await strictlyIncreasing(
        t.database.db,
        s.events.map((e) => e.id),
      ),
    ).toBe(true);
    // Sent its position first, as a stream from now is (a heartbeat's would come only after 10 s): a reconnection resumes from there.
    const ahead = await stream(keyB, `types=reward_log.created&startAt=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    await ahead.waitFor("its position", () => ahead.lastId !== "", 5_000);
    expect(ahead.events).toEqual([]);
  });

  it.each([
    ["startAt=yesterday", {}, 400, /^startAt: expected an ISO 8601 date-time with Z or an offset/],
    [`startAt=2026-01-01T00:00:00Z&lastEventId=${EXPIRED_EVENT_ID}`, {}, 400, /^startAt: send it or a resume point \(Last-Event-ID, lastEventId\), not both$/],
    [
      "startAt=2026-01-01T00:00:00Z",
      { "Last-Event-ID": EXPIRED_EVENT_ID },
      400,
      /^startAt: send it or a resume point \(Last-Event-ID, lastEventId\), not both$/,
    ],
    [
      `startAt=${encodeURIComponent(new Date(Date.now() - 31 * 86_400_000).toISOString())}`,
      {},
      410,
      /^startAt: the stream cannot start at this moment: it is past the retention/,
    ],
  ])("when the query is %s (headers %j), then %i before the stream starts", async (query, headers, status, message) => {
    const s = await stream(keyB, query, headers);
    expect(s.status).toBe(status);
    expect(JSON.parse(s.body).message).toMatch(message);
  });

  it("when the id sent is not one this service sends, or two differ, then 400 naming it", async () => {
    const bad = await stream(keyB, "", { "Last-Event-ID": "42" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toMatch(/^Last-Event-ID: expected the id of an event this stream sent/);
    const both = await stream(keyB, `lastEventId=${EXPIRED_EVENT_ID}`, { "Last-Event-ID": `${"0".repeat(31)}2` });
    expect(both.status).toBe(400);
    expect(JSON.parse(both.body).message).toMatch(/^lastEventId: differs from the Last-Event-ID header/);
    const unknown = await stream(keyB, "types=reward_log.created,reward.deleted");
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).message).toMatch(/^types: unknown event type 'reward.deleted'; expected any of reward_log.created/);
  });

  it("when a caller asks for a type it may not see, then 403 naming it; without a key 401; by default, every type it may see", async () => {
    // user-C (group C) may read cosmetics, players and parkour maps, but call neither create-reward-log nor update-world.
    const refused = await stream(keyC, "types=cosmetic.updated,reward_log.created,world.updated");
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      code: 403,
      message: expect.stringMatching(/^types: this API user may not subscribe to reward_log.created, world.updated /),
    });
    expect((await stream(undefined)).status).toBe(401);
    const allOfC = await stream(keyC);
    expect(allOfC.status).toBe(200);
    await allOfC.waitFor("the position", () => allOfC.lastId !== "");
    await reward();
    await t.database.db.prisma.$executeRaw`SELECT 1`;
    const cosmetic = await t.database.db.prisma.cosmetic.create({
      data: { name: `events-${Date.now()}`, type: "hat", rarity: "rare", game: "lobby", argumentFr: "", argumentEn: "", image: "x.png" },
    });
    const update = await fetch(`${t.url}/api/cosmetic/update-cosmetic`, {
      method: "PATCH",
      headers: { "X-API-Key": keyB, "Content-Type": "application/json" },
      body: JSON.stringify({ id: cosmetic.id, price: 5 }),
    });
    expect(update.status).toBe(200);
    await allOfC.waitFor("the cosmetic event", () => allOfC.events.length === 1);
    // The reward before it was not for user-C.
    expect(allOfC.events.map((e) => e.event)).toEqual(["cosmetic.updated"]);
  });

  it("when a user holds EVENTS_STREAMS_PER_USER streams, then another is 429 with Retry-After, until one closes", async () => {
    const held = [await stream(keyB), await stream(keyB), await stream(keyB)];
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await stream(keyB);
    expect(fourth.status).toBe(429);
    expect(fourth.headers["retry-after"]).toBe("5");
    expect(JSON.parse(fourth.body).message).toBe("This API user already has 3 event streams open on this instance: close one, or retry in 5 s");
    // Another user is not counted with it.
    expect((await stream(keyC)).status).toBe(200);
    await held[0]!.close();
    await waitUntil(() => t.events.size === 3);
    expect((await stream(keyB)).status).toBe(200);
  });

  it("when the stream's key is revoked, then the stream ends", async () => {
    const key = await t.key("user-A");
    const s = await stream(key);
    await s.waitFor("the position", () => s.lastId !== "");
    await t.users.revoke("user-A");
    await s.end;
    expect((await stream(key)).status).toBe(401);
  });

  it("when a client speaks HTTP/1.0 (no chunks), then its events come as they are, the end of the connection ending the body", async () => {
    // Live events are written to the connection already framed: as one HTTP chunk for HTTP/1.1, as they are here.
    // The streams of the tests before are gone first (user-B may hold three).
    await waitUntil(() => t.events.size === 0);
    const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.write(`GET /api/events?types=reward_log.created HTTP/1.0\r\nX-API-Key: ${keyB}\r\n\r\n`);
    try {
      await waitUntil(() => text.includes("\r\n\r\nretry:"));
      const ids = [await reward(), await reward()];
      await waitUntil(() => text.includes(`"rewardId":${ids[1]}`), 20_000);
      expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(text).not.toMatch(/transfer-encoding/i);
      const id = "[A-Za-z0-9_-]{54,65}";
      const event = (rewardId: number) => `id: ${id}\nevent: reward_log\\.created\ndata: \\{[^\n]*"rewardId":${rewardId}[^\n]*\\}\n\n`;
      // Heartbeats may come between (a comment, at any moment).
      const body = text.slice(text.indexOf("\r\n\r\n") + 4).replaceAll(new RegExp(`: heartbeat\nid: ${id}\n\n`, "g"), "");
      expect(body).toMatch(new RegExp(`^retry: 2000\nid: ${id}\n\n(.+\n)*\n*${event(ids[0]!)}${event(ids[1]!)}$`));
    } finally {
      socket.destroy();
    }
  });

  it("when a reader takes nothing while events pile up, then its stream is closed once EVENTS_BUFFER_BYTES wait, and it resumes from its last event", async () => {
    const small = await startTestApp({ database: t.database, env: { EVENTS_BUFFER_BYTES: "16384" } });
    try {
      const port = new URL(small.url).port;
      // A client that sends its request and never reads: what the server writes piles up.
      const socket = net.connect(Number(port), "127.0.0.1");
      socket.write(`GET /api/events?types=reward_log.created HTTP/1.1\r\nHost: x\r\nX-API-Key: ${keyB}\r\n\r\n`);
      socket.pause();
      await waitUntil(() => small.events.size === 1);
      // 40 MB of events, more than any socket buffer holds.
      await t.database.db.prisma.$executeRaw`
        INSERT INTO webhook_events (type, data)
        SELECT 'reward_log.created', json_build_object('pad', repeat('x', 100000), 'n', n)::text FROM generate_series(1, 400) n`;
      await waitUntil(() => small.events.size === 0, 20_000);
      const cut = small.logs.lines.find((l) => l.msg === "event stream reader too slow: stream closed, the client resumes");
      expect(cut).toBeDefined();
      // What the server held for it: the buffer, and at most the one event that went over it.
      expect(cut!.heldBytes as number).toBeLessThan(16_384 + 101_000);
      socket.destroy();
    } finally {
      await small.close();
    }
  }, 30_000);

  it("when the instance stops, then its streams end (clients reconnect elsewhere) and a new one is refused", async () => {
    const hub = new EventHub(t.database.db, t.config, { warn: () => undefined } as never);
    const stopping = await startTestApp({ database: t.database, events: hub });
    try {
      const s = await openStream(stopping.url, keyB);
      await s.waitFor("the position", () => s.lastId !== "");
      await hub.close();
      await s.end;
      const refused = await openStream(stopping.url, keyB);
      expect(refused.status).toBe(503);
    } finally {
      await stopping.close();
    }
  });
});

async function waitUntil(test: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
