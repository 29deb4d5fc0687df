import { once } from "node:events";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { defineRoute } from "../src/http/route.js";
import { apiRoutes } from "../src/resources/index.js";
import { createHttpServer } from "../src/service/http-server.js";
import { Metrics } from "../src/service/metrics.js";
import { LogCapture, startTestApp, type TestApp } from "./helpers/app.js";

/** A heavy route whose handlers wait until the test lets them finish; each call is recorded. */
const running: { id: string; finish: () => void }[] = [];
const heavyProbe = defineRoute({
  method: "GET",
  path: "/probe/heavy",
  summary: "a full list that takes its time",
  description: "test probe",
  callers: ["A"],
  query: z.strictObject({ id: z.string() }),
  response: z.unknown(),
  heavy: true,
  handler: ({ query }) => new Promise((resolve) => running.push({ id: query.id, finish: () => resolve({ id: query.id }) })),
});
const routes = [...apiRoutes, heavyProbe];

let t: TestApp;
let metrics: Metrics;
let key: string;
beforeAll(async () => {
  metrics = new Metrics(undefined, { processMetrics: false });
  t = await startTestApp({ env: { HEAVY_LISTS_AT_ONCE: "1" }, routes, metrics });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const ask = (url: string, id: string, signal?: AbortSignal) => fetch(`${url}/api/probe/heavy?id=${id}`, { headers: { "X-API-Key": key }, signal });
const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec((await metrics.text()).body)?.[1]);
/** Waits until the handlers under way are `ids` (each built list is recorded as it starts). */
const building = (...ids: string[]) => vi.waitFor(() => expect(running.map((r) => r.id)).toEqual(ids), { timeout: 10_000, interval: 10 });
/** Waits until the bulkhead's gauge says `value`. */
const gaugeIs = (name: string, value: number) => vi.waitFor(async () => expect(await gauge(name)).toBe(value), { timeout: 10_000, interval: 10 });

describe("the heavy-list bulkhead", () => {
  it("when the limit is reached, then the next client waits; when one leaves while waiting, then its list is never built", async () => {
    const first = ask(t.url, "first");
    await building("first");
    const quitter = new AbortController();
    const leaving = ask(t.url, "leaver", quitter.signal).catch(() => "left");
    const third = ask(t.url, "third");
    await gaugeIs("heavy_lists_waiting", 2);
    expect(running.map((r) => r.id)).toEqual(["first"]);

    quitter.abort();
    expect(await leaving).toBe("left");
    await gaugeIs("heavy_lists_waiting", 1); // the server noticed the closed connection
    running[0]!.finish();
    expect((await first).status).toBe(200);
    // The leaver's turn passed to the third client, without building anything for nobody.
    await building("first", "third");
    running[1]!.finish();
    expect((await third).status).toBe(200);
  });

  it("when a client waiting for a slot disconnects, then it leaves the queue at once, and the next one takes the slot as soon as it is free", async () => {
    running.length = 0;
    const holder = ask(t.url, "holder");
    await building("holder");
    const quitter = new AbortController();
    const leaving = ask(t.url, "gone", quitter.signal).catch(() => "left");
    await gaugeIs("heavy_lists_waiting", 1);

    quitter.abort();
    await leaving;
    await gaugeIs("heavy_lists_waiting", 0);
    expect(await gauge("heavy_lists_in_progress")).toBe(1);

    const next = ask(t.url, "next");
    await gaugeIs("heavy_lists_waiting", 1);
    running[0]!.finish();
    expect((await holder).status).toBe(200);
    await building("holder", "next");
    running[1]!.finish();
    expect((await next).status).toBe(200);
    await gaugeIs("heavy_lists_in_progress", 0);
  });

  it("when no slot comes free within HEAVY_LIST_WAIT_MS, then 503 with Retry-After and the error body, and its list is never built", async () => {
    running.length = 0;
    const busy = await startTestApp({ database: t.database, env: { HEAVY_LISTS_AT_ONCE: "1", HEAVY_LIST_WAIT_MS: "1500" }, routes });
    try {
      const holder = ask(busy.url, "holding");
      await building("holding");
      const started = Date.now();
      const res = await ask(busy.url, "refused", AbortSignal.timeout(10_000));
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      // The wait, rounded up: not the one second of the other 503s.
      expect(res.headers.get("retry-after")).toBe("2");
      expect(await res.json()).toEqual({ code: 503, message: "Too many full lists in progress on this instance: retry in 2 s" });
      expect(took).toBeGreaterThanOrEqual(1_450);
      expect(running.map((r) => r.id)).toEqual(["holding"]);
      running[0]!.finish();
      expect((await holder).status).toBe(200);
    } finally {
      await busy.close();
    }
  });
});

/** Rows long enough that the list is several times what the kernel buffers for a client that stops reading. */
const STALL_PLAYERS = 14_000;
const STALL_CUT_MS = 5_000;

/** A raw HTTP client that reads the first bytes of its answer, then stops reading. */
async function stalledReader(url: string, path: string, apiKey: string, options: { trickleEveryMs?: number } = {}) {
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
  await once(socket, "connect");
  const chunks: Buffer[] = [];
  let received = 0;
  let stopped = false;
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("error", () => undefined);
  const started = new Promise<void>((resolve) =>
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= 200 && !stopped) {
        stopped = true;
        socket.pause();
        resolve();
      }
      // A reader that keeps taking its answer, a chunk at a time: steady, but slow.
      if (options.trickleEveryMs !== undefined) {
        socket.pause();
        setTimeout(() => socket.resume(), options.trickleEveryMs);
      }
    }),
  );
  socket.write(`GET /api${path} HTTP/1.1\r\nHost: stalled\r\nX-API-Key: ${apiKey}\r\n\r\n`);
  await started;
  return {
    /**
     * Reads what is left, once the test lets it: whether the whole answer arrived before the connection ended
     * (its Content-Length, or the end of its chunked encoding: a streamed list), and how much did.
     */
    async drain() {
      socket.resume();
      await closed;
      const all = Buffer.concat(chunks);
      const head = all.subarray(0, all.indexOf("\r\n\r\n")).toString("latin1");
      const bodyBytes = all.length - head.length - 4;
      const contentLength = /content-length: (\d+)/i.exec(head)?.[1];
      const complete = contentLength !== undefined ? bodyBytes === Number(contentLength) : all.subarray(-7).toString("latin1") === "\r\n0\r\n\r\n";
      return { chunked: /transfer-encoding: chunked/i.test(head), complete, bodyBytes };
    },
  };
}

describe("stalled readers", () => {
  let s: TestApp;
  let readerKey: string;
  let otherKey: string;
  beforeAll(async () => {
    // The test's own fetch reads its lists in this process, whose event loop PGlite holds while it reads them: on
    // a loaded machine, for over a second (SEND_TIMEOUT_MS's least), and the server would cut it too (ECONNRESET).
    // The other callers wait for a slot as long as the test lasts: answered only once the readers are cut.
    s = await startTestApp({ env: { HEAVY_LISTS_AT_ONCE: "2", SEND_TIMEOUT_MS: String(STALL_CUT_MS), HEAVY_LIST_WAIT_MS: "600000" } });
    readerKey = await s.key("user-C");
    otherKey = await s.key("user-D");
    await s.database.db.prisma.$executeRawUnsafe(`
      INSERT INTO players (pseudo, token, ip, nickname, "chatId", tag, color)
      SELECT 'stall' || g || repeat('p', 200), 't', '198.51.100.1', 'nick' || g || repeat('n', 200),
             repeat('c', 64), repeat('t', 64), repeat('k', 32)
        FROM generate_series(1, ${STALL_PLAYERS}) AS g`);
  }, 120_000);
  afterAll(() => s.close());

  it("when two clients take a few bytes of a several-MB list and stop reading, then they are cut off, and another caller's lists, waiting for their slots, are answered", async () => {
    const stalled = [await stalledReader(s.url, "/player/get-all-players", readerKey), await stalledReader(s.url, "/player/get-all-players", readerKey)];

    const list = async (path: string) => {
      const res = await fetch(`${s.url}/api${path}`, { headers: { "X-API-Key": otherKey } });
      const body = await res.text();
      return { status: res.status, bytes: body.length };
    };
    const [players, infected] = await Promise.all([list("/player/get-all-players"), list("/infecte2/get-all-infectes")]);
    expect(players.status).toBe(200);
    expect(infected.status).toBe(200);
    expect(players.bytes).toBeGreaterThan(8_000_000);

    // On a loaded machine the second reader's answer may begin (and stall) later than the first's, and
    // the other lists may be done before it is cut: read on only once both were cut, or the second
    // reader would take its whole answer.
    const cutLines = () => s.logs.lines.filter((l) => l.msg === "client took none of its answer within SEND_TIMEOUT_MS: connection cut");
    await vi.waitFor(() => expect(cutLines()).toHaveLength(2), { timeout: 30_000, interval: 100 });
    for (const reader of stalled) {
      const { chunked, complete, bodyBytes } = await reader.drain();
      expect(chunked).toBe(true);
      expect(complete).toBe(false);
      expect(bodyBytes).toBeLessThan(players.bytes);
    }
    const cut = cutLines();
    expect(cut).toHaveLength(2);
    expect(cut[0]).toMatchObject({ level: 40, method: "GET", path: "/api/player/get-all-players", sendTimeoutMs: STALL_CUT_MS });
    expect(s.logs.raw.join("\n")).not.toContain(readerKey);
  }, 120_000);

  it("when one API user's clients hold full lists, then they hold one slot of two, and another user's list is served at once", async () => {
    const appMetrics = new Metrics(undefined, { processMetrics: false });
    const app = await startTestApp({
      database: s.database,
      metrics: appMetrics,
      env: { HEAVY_LISTS_AT_ONCE: "2", SEND_TIMEOUT_MS: "60000", HEAVY_LIST_WAIT_MS: "20000" },
    });
    const appGauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec((await appMetrics.text()).body)?.[1]);
    try {
      const [hogKey, callerKey] = [readerKey, otherKey];
      await stalledReader(app.url, "/player/get-all-players", hogKey);
      // The same user's second list waits for its own first one, not for the free slot.
      const second = net.connect(Number(new URL(app.url).port), "127.0.0.1");
      second.on("error", () => undefined);
      second.write(`GET /api/player/get-all-players HTTP/1.1\r\nHost: hog\r\nX-API-Key: ${hogKey}\r\n\r\n`);
      await vi.waitFor(async () => expect(await appGauge("heavy_lists_waiting")).toBe(1), { timeout: 10_000, interval: 50 });
      expect(await appGauge("heavy_lists_in_progress")).toBe(1);
      const res = await fetch(`${app.url}/api/infecte2/get-all-infectes`, { headers: { "X-API-Key": callerKey }, signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      second.destroy();
    } finally {
      await app.close();
    }
  }, 60_000);

  it("when a client takes its list steadily but too slowly, then it is cut off at HEAVY_LIST_DEADLINE_MS and its slot goes to the next caller", async () => {
    const app = await startTestApp({ database: s.database, env: { HEAVY_LISTS_AT_ONCE: "1", SEND_TIMEOUT_MS: "60000", HEAVY_LIST_DEADLINE_MS: "2000" } });
    try {
      const [slowKey, callerKey] = [readerKey, otherKey];
      const slow = await stalledReader(app.url, "/player/get-all-players", slowKey, { trickleEveryMs: 100 });
      const res = await fetch(`${app.url}/api/infecte2/get-all-infectes`, { headers: { "X-API-Key": callerKey }, signal: AbortSignal.timeout(20_000) });
      expect(res.status).toBe(200);
      const { complete, bodyBytes } = await slow.drain();
      expect(complete).toBe(false);
      expect(bodyBytes).toBeGreaterThan(0);
      expect(app.logs.lines.filter((l) => l.msg === "full list not taken by its client within HEAVY_LIST_DEADLINE_MS: connection cut")).toHaveLength(1);
    } finally {
      await app.close();
    }
  }, 60_000);

  it("when an answer has begun and the service, not the client, is slow to write the rest, then the connection is not cut", async () => {
    // What a list streamed from the database looks like: a first chunk, then nothing waiting while the next is read.
    const logs = new LogCapture();
    const server = createHttpServer(
      (_req, res) => {
        res.setHeader("Content-Type", "application/json");
        res.write("[1");
        setTimeout(() => res.end(",2]"), 2_500);
      },
      loadConfig({ SEND_TIMEOUT_MS: "1000" }),
      createLogger("debug", logs),
    ).listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
      expect(await res.text()).toBe("[1,2]");
      expect(logs.raw).toEqual([]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
