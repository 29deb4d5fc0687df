import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type LiveEvent, subscribe } from "../clients/typescript/src/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { EXPIRED_EVENT_ID, openStream } from "./helpers/sse.js";

/** The TypeScript client's subscribe() against the service: events, reconnection with resume, Retry-After, 410. */
let t: TestApp;
let key: string;
let playerId: number;
let nextReward = 1;

const reward = async () => {
  const rewardId = nextReward++;
  // A connection of its own (agent: false): closeAllConnections below also cuts the idle ones a pool would reuse.
  const status = await new Promise<number>((resolve, reject) => {
    const body = JSON.stringify({ playerId, rewardId });
    const req = http.request(
      `${t.url}/api/website/create-reward-log`,
      {
        method: "POST",
        agent: false,
        headers: { "X-API-Key": key, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
  expect(status).toBe(201);
  return rewardId;
};

/** Collects what a subscription yields, in the background, until stopped. */
function collect(options: Partial<Parameters<typeof subscribe>[0]> = {}) {
  const stop = new AbortController();
  const events: LiveEvent<{ rewardId: number }>[] = [];
  const reconnects: { cause: unknown; delayMs: number }[] = [];
  const done = (async () => {
    const iterator = subscribe<{ rewardId: number }>({
      baseUrl: `${t.url}/api`,
      apiKey: key,
      types: ["reward_log.created"],
      signal: stop.signal,
      onReconnect: (cause, delayMs) => reconnects.push({ cause, delayMs }),
      ...options,
    });
    for await (const event of iterator) events.push(event);
  })();
  return { events, reconnects, done, stop: () => stop.abort() };
}

/** `promise`, or a failure naming `what` after `ms`: a step that hangs says which it was. */
async function within<T>(what: string, promise: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitUntil(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!test()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  t = await startTestApp({ env: { EVENTS_STREAMS_PER_USER: "1" } });
  key = await t.key("user-B");
  playerId = (await makePlayer(t.database.db.prisma)).id;
});
afterAll(() => t.close());

describe("the TypeScript client's subscribe()", () => {
  it("when connections drop between writes, then it reconnects and yields every event once, in order", async () => {
    const s = collect();
    await waitUntil("the stream", () => t.events.size === 1);
    const written = [await reward(), await reward()];
    await waitUntil("two events", () => s.events.length === 2);
    // The server side cuts every connection (a load balancer, an instance gone): the client resumes.
    t.server.closeAllConnections();
    written.push(await reward(), await reward(), await reward());
    await waitUntil("five events", () => s.events.length === 5);
    expect(s.events.map((e) => e.data.rewardId)).toEqual(written);
    expect(s.events[0]).toMatchObject({ type: "reward_log.created", timestamp: expect.stringMatching(/Z$/), data: { playerId } });
    expect(s.reconnects.length).toBeGreaterThanOrEqual(1);
    s.stop();
    await s.done;
  });

  it("when the connection drops while the handler still runs, then it resumes after the event being handled, once the handler returned", async () => {
    const stop = new AbortController();
    const got: number[] = [];
    const resumedFrom: (string | null)[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let handling!: () => void;
    const inHandler = new Promise<void>((r) => (handling = r));
    const send = (request: Request) => {
      resumedFrom.push(request.headers.get("Last-Event-ID"));
      return fetch(request);
    };
    const done = (async () => {
      for await (const event of subscribe<{ rewardId: number }>({
        baseUrl: `${t.url}/api`,
        apiKey: key,
        types: ["reward_log.created"],
        signal: stop.signal,
        fetch: send,
      })) {
        got.push(event.data.rewardId);
        if (got.length === 1) {
          handling();
          await blocked;
        }
      }
    })();
    await waitUntil("the stream", () => t.events.size === 1);
    const written = [await reward()];
    await within("the handler", inHandler);
    written.push(await reward(), await reward());
    // The connection is cut while the first event's handler runs.
    t.server.closeAllConnections();
    await waitUntil("the stream's end", () => t.events.size === 0);
    expect(resumedFrom).toHaveLength(1);
    release();
    await waitUntil("three events", () => got.length >= 3);
    expect(got).toEqual(written);
    stop.abort();
    await done;
    await waitUntil("the stream's end", () => t.events.size === 0);
  });

  it("when the user holds all its streams, then it waits the Retry-After of the 429, then streams", async () => {
    const held = await openStream(t.url, key);
    expect(held.status).toBe(200);
    const s = collect();
    await waitUntil("the refusal", () => s.reconnects.length === 1);
    expect(s.reconnects[0]!.delayMs).toBe(5_000);
    expect((s.reconnects[0]!.cause as ApiError).status).toBe(429);
    await held.close();
    await waitUntil("the held stream's end", () => t.events.size === 0);
    await waitUntil("the stream", () => t.events.size === 1, 10_000);
    const id = await reward();
    await waitUntil("the event", () => s.events.length === 1);
    expect(s.events[0]!.data.rewardId).toBe(id);
    s.stop();
    await s.done;
    // The next test counts its own stream: this one must be gone from the server first (one stream per user here).
    await waitUntil("the stream's end", () => t.events.size === 0);
  }, 20_000);

  it("when it is given a resume point, then it starts after it; one past the retention throws the 410", async () => {
    const first = collect();
    await waitUntil("the stream", () => t.events.size === 1);
    const ids = [await within("the first write", reward()), await within("the second write", reward())];
    await waitUntil("two events", () => first.events.length === 2);
    first.stop();
    await within("the first subscription's end", first.done);
    await waitUntil("the stream's end", () => t.events.size === 0);
    const resumed = collect({ lastEventId: first.events[0]!.id });
    await waitUntil("the second event", () => resumed.events.length === 1);
    expect(resumed.events.map((e) => e.data.rewardId)).toEqual([ids[1]]);
    resumed.stop();
    await within("the resumed subscription's end", resumed.done);
    await waitUntil("the stream's end", () => t.events.size === 0);
    const expired = collect({ lastEventId: EXPIRED_EVENT_ID });
    await expect(within("the 410", expired.done)).rejects.toMatchObject({ name: "ApiError", status: 410 });
  }, 60_000);
});
