import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { openStream } from "./helpers/sse.js";

/**
 * GET /api/events and the connection it runs on: nothing is ever written to
 * a socket outside a response. HEAD answers the stream's head and ends, and
 * the keep-alive connection serves its next request, whoever sends it (a
 * pooling proxy hands it to another caller) (issue 37).
 */
let t: TestApp;
let keyB: string;
let nick: string;

beforeAll(async () => {
  t = await startTestApp();
  keyB = await t.key("user-B");
  nick = (await makePlayer(t.database.db.prisma)).pseudo;
});
afterAll(async () => {
  await t.close();
});

/** One raw connection: what it received, and requests written on it. */
function connection() {
  const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
  let received = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (received += chunk));
  return {
    socket,
    get received() {
      return received;
    },
    async until(test: (text: string) => boolean, what: string): Promise<void> {
      const until = Date.now() + 10_000;
      while (!test(received)) {
        if (Date.now() > until || socket.destroyed) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(received)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

const reward = async () => {
  const res = await fetch(`${t.url}/api/website/create-reward-log`, {
    method: "POST",
    headers: { "X-API-Key": keyB, "Content-Type": "application/json" },
    body: JSON.stringify({ playerId: (await t.database.db.prisma.player.findFirstOrThrow({ where: { pseudo: nick } })).id, rewardId: 7 }),
  });
  expect(res.status).toBe(201);
};

describe("HEAD /api/events", () => {
  it("when asked HEAD, then the stream's head comes and the response ends: no stream stays open", async () => {
    const res = await fetch(`${t.url}/api/events?types=reward_log.created`, { method: "HEAD", headers: { "X-API-Key": keyB } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await res.text()).toBe("");
    expect(t.events.size).toBe(0);
  });

  it("when HEAD then another request go on one keep-alive connection while events come, then the second is answered, and nothing else is on the wire", async () => {
    const c = connection();
    try {
      c.socket.write(`HEAD /api/events?types=reward_log.created HTTP/1.1\r\nHost: x\r\nX-API-Key: ${keyB}\r\n\r\n`);
      await c.until((text) => text.includes("\r\n\r\n"), "the head");
      const head = c.received;
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      // An event, seen on a stream of its own: by then every stream of the instance has been handed it.
      const watcher = await openStream(t.url, keyB, "types=reward_log.created");
      try {
        await watcher.waitFor("the position", () => watcher.lastId !== "");
        await reward();
        await watcher.waitFor("the event", () => watcher.events.length === 1);
      } finally {
        await watcher.close();
      }
      // The next request on the connection, as a proxy would send another caller's.
      c.socket.write(`GET /api/player/get-player-by-nick?nick=${encodeURIComponent(nick)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${keyB}\r\n\r\n`);
      await c.until((text) => text.slice(head.length).includes(`"pseudo":"${nick}"`), "the player");
      const rest = c.received.slice(head.length);
      expect(rest).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(rest)![1]);
      const body = rest.slice(rest.indexOf("\r\n\r\n") + 4);
      expect(Buffer.byteLength(body)).toBe(length);
      expect(JSON.parse(body)).toMatchObject({ pseudo: nick });
    } finally {
      c.socket.destroy();
    }
  });

  it("when HEAD is refused (a bad Last-Event-ID), then its status comes with no body, and the connection serves on", async () => {
    const c = connection();
    try {
      c.socket.write(`HEAD /api/events HTTP/1.1\r\nHost: x\r\nX-API-Key: ${keyB}\r\nLast-Event-ID: 42\r\n\r\n`);
      await c.until((text) => text.includes("\r\n\r\n"), "the head");
      expect(c.received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      const head = c.received;
      c.socket.write(`GET /api/player/get-player-by-nick?nick=${encodeURIComponent(nick)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${keyB}\r\n\r\n`);
      await c.until((text) => text.slice(head.length).includes(`"pseudo":"${nick}"`), "the player");
      expect(c.received.slice(head.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    } finally {
      c.socket.destroy();
    }
  });
});
