import { randomBytes } from "node:crypto";
import { once } from "node:events";
import net from "node:net";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RateLimitKind } from "../src/http/rate-limit.js";
import { ApiUsers } from "../src/users/users.js";
import { startTestApp, type TestApp, type TestAppOptions } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/** The Redis the counters are shared through (the machine's own); its tests are skipped when it is not there. */
const REDIS_URL = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379";
const redisPort = Number(new URL(REDIS_URL).port || 6379);
const redisHost = new URL(REDIS_URL).hostname;
const redisAvailable = await reachable(redisHost, redisPort);
if (!redisAvailable && process.env.REQUIRE_REDIS) throw new Error(`No Redis at ${REDIS_URL}, and REQUIRE_REDIS is set`);
if (!redisAvailable) console.warn(`rate-limit: Redis tests skipped, nothing answers at ${REDIS_URL} (set REDIS_TEST_URL)`);

const USERS = ["alice", "bob", "carol", "dave"] as const;
const MAPS = "/api/parkour/get-all-maps";

let database: TestDatabase;
let users: ApiUsers;
const keys: Record<string, string> = {};
const apps: TestApp[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  users = new ApiUsers(database.db.prisma);
  for (const name of USERS) keys[name] = (await users.create(name)).apiKey;
});
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
afterAll(() => database.drop());

/** An app on the shared database, where every test user may call every route of group A. */
async function app(env: Record<string, string>, options: TestAppOptions = {}): Promise<TestApp> {
  const t = await startTestApp({ database, ...options, env: { CALLERS_USER_A: USERS.join(","), ...env } });
  apps.push(t);
  return t;
}

const get = (t: TestApp, key: string, from?: string) => {
  const req = request(t.url).get(MAPS).set("X-API-Key", key);
  return from ? req.set("X-Forwarded-For", from) : req;
};
const BAD_KEY = `gsk_${"A".repeat(43)}`;

describe("the per-user limit", () => {
  it("when an API user sends more than RATE_LIMIT_PER_MINUTE requests, then 429 with Retry-After, and other users are not affected", async () => {
    const limited: RateLimitKind[] = [];
    const t = await app({ RATE_LIMIT_PER_MINUTE: "5" }, { onRateLimited: (kind) => limited.push(kind) });
    for (let i = 0; i < 5; i++) {
      const res = await get(t, keys.alice!);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"user"; r=${4 - i}; t=([1-9]|[1-5][0-9]|60)$`));
      expect(res.headers["ratelimit-policy"]).toMatch(/^"user"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
      expect(res.headers["retry-after"]).toBeUndefined();
    }
    const refused = await get(t, keys.alice!);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 429, message: expect.stringMatching(/^Too many requests: this API user may send 5 a minute; retry in \d+ s$/) });
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body.message).toContain(`retry in ${retryAfter} s`);
    expect(refused.headers.ratelimit).toMatch(/^"user"; r=0; t=\d+$/);
    expect(limited).toEqual(["user"]);

    const other = await get(t, keys.bob!);
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/^"user"; r=4;/);
  });

  it("when a user's key is rotated, then the new key shares the user's budget", async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: "3" });
    for (let i = 0; i < 3; i++) expect((await get(t, keys.dave!)).status).toBe(200);
    keys.dave = (await users.rotate("dave")).apiKey;
    const res = await get(t, keys.dave);
    expect(res.status).toBe(429);
  });

  it("when a refused method is called (405), then it counts and is limited like any request", async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: "2" });
    expect((await request(t.url).put(MAPS).set("X-API-Key", keys.carol!)).status).toBe(405);
    expect((await get(t, keys.carol!)).status).toBe(200);
    expect((await request(t.url).put(MAPS).set("X-API-Key", keys.carol!)).status).toBe(429);
  });

  it("when RATE_LIMIT_PER_MINUTE is 0, then there is no limit and no RateLimit header", async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: "0" });
    for (let i = 0; i < 30; i++) {
      const res = await get(t, keys.alice!);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.headers["ratelimit-policy"]).toBeUndefined();
    }
  });
});

describe("the per-address limit on failed authentication", () => {
  it("when an address has sent AUTH_FAILURES_PER_MINUTE bad keys, then it gets 429 even with a good key, and other addresses do not", async () => {
    const limited: RateLimitKind[] = [];
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "loopback" }, { onRateLimited: (kind) => limited.push(kind) });
    const guesser = "203.0.113.7";
    expect((await get(t, BAD_KEY, guesser)).status).toBe(401);
    expect((await request(t.url).get(MAPS).set("X-Forwarded-For", guesser)).status).toBe(401);
    // The 405 path checks keys too: its failures count, or it would be an open oracle.
    expect((await request(t.url).put(MAPS).set("X-API-Key", BAD_KEY).set("X-Forwarded-For", guesser)).status).toBe(401);

    const refused = await get(t, keys.alice!, guesser);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 429, message: expect.stringMatching(/^Too many requests with an invalid API key from this address; retry in \d+ s$/) });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect((await get(t, BAD_KEY, guesser)).status).toBe(429);
    expect((await request(t.url).put(MAPS).set("X-API-Key", keys.alice!).set("X-Forwarded-For", guesser)).status).toBe(429);

    const neighbour = "203.0.113.8";
    expect((await get(t, keys.alice!, neighbour)).status).toBe(200);
    expect((await get(t, BAD_KEY, neighbour)).status).toBe(401);
    expect(limited).toEqual(["address", "address", "address"]);
  });

  it("when an address sends good requests, then they do not count toward its failure budget", async () => {
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "loopback" });
    const client = "198.51.100.20";
    // Many at once, too: a busy client is never mistaken for a guesser.
    const burst = await Promise.all(Array.from({ length: 10 }, () => get(t, keys.alice!, client)));
    expect(burst.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await get(t, BAD_KEY, client)).status).toBe(401);
    expect((await get(t, keys.alice!, client)).status).toBe(200);
    expect((await get(t, BAD_KEY, client)).status).toBe(401);
    expect((await get(t, keys.alice!, client)).status).toBe(429);
  });

  it("when X-Forwarded-For is sent but TRUST_PROXY is off, then it is not believed: the connection's address is limited", async () => {
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "2" });
    expect((await get(t, BAD_KEY, "203.0.113.1")).status).toBe(401);
    expect((await get(t, BAD_KEY, "203.0.113.2")).status).toBe(401);
    expect((await get(t, keys.alice!, "203.0.113.3")).status).toBe(429);
  });

  it("when AUTH_FAILURES_PER_MINUTE is 0, then bad keys are never limited", async () => {
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "0" });
    for (let i = 0; i < 20; i++) expect((await get(t, BAD_KEY)).status).toBe(401);
    expect((await get(t, keys.alice!)).status).toBe(200);
  });
});

describe.runIf(redisAvailable)("counters in Redis", () => {
  let redis: Redis;
  const prefixes: string[] = [];
  const newPrefix = () => {
    const prefix = `rl-test:${randomBytes(6).toString("hex")}:`;
    prefixes.push(prefix);
    return prefix;
  };
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    for (const prefix of prefixes.splice(0)) {
      const found = await redis.keys(`${prefix}*`);
      if (found.length > 0) await redis.del(...found);
    }
  });
  afterAll(async () => {
    await redis.quit();
  });

  it("when two instances share REDIS_URL, then they share each user's and each address's counter", async () => {
    const rateLimitPrefix = newPrefix();
    const env = { REDIS_URL, RATE_LIMIT_PER_MINUTE: "4", AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "loopback" };
    const one = await app(env, { rateLimitPrefix });
    const two = await app(env, { rateLimitPrefix });
    for (const t of [one, two, one, two]) expect((await get(t, keys.bob!)).status).toBe(200);
    expect((await get(one, keys.bob!)).status).toBe(429);
    expect((await get(two, keys.bob!)).status).toBe(429);
    expect((await get(two, keys.carol!)).status).toBe(200);

    const guesser = "203.0.113.50";
    expect((await get(one, BAD_KEY, guesser)).status).toBe(401);
    expect((await get(two, BAD_KEY, guesser)).status).toBe(401);
    expect((await get(one, keys.carol!, guesser)).status).toBe(429);

    const stored = (await redis.keys(`${rateLimitPrefix}*`)).sort();
    const ids = await database.db.prisma.apiUser.findMany({ where: { username: { in: ["bob", "carol"] } }, select: { id: true } });
    expect(stored).toEqual(
      [`${rateLimitPrefix}auth:${guesser}`, ...ids.map(({ id }) => `${rateLimitPrefix}user:${id}`)].sort(),
    );
  });

  it("when Redis is unreachable, then requests pass at once, one warning is logged, and counting resumes when it is back", async () => {
    const rateLimitPrefix = newPrefix();
    const port = await freePort();
    const t = await app(
      { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: "3", AUTH_FAILURES_PER_MINUTE: "1" },
      { rateLimitPrefix },
    );
    // Down from the start: nothing listens on the port.
    await expectFailOpen(t, 6);
    const warnings = t.logs.lines.filter((l) => l.level === 40 && String(l.msg).includes("fail open"));
    expect(warnings).toHaveLength(1);

    // Back: a proxy to the real Redis on that port.
    const proxy = await tcpProxy(port, redisHost, redisPort);
    try {
      const first = await untilCounted(t);
      expect(first.headers.ratelimit).toMatch(/^"user"; r=2;/);
      expect((await get(t, keys.alice!)).status).toBe(200);
      expect((await get(t, keys.alice!)).status).toBe(200);
      expect((await get(t, keys.alice!)).status).toBe(429);
      expect(t.logs.lines.some((l) => l.msg === "Redis reachable again: rate limits are enforced")).toBe(true);
    } finally {
      await proxy.close();
    }
    // Down again while connected: still no hang, and the user over budget passes (fail open).
    await expectFailOpen(t, 4);
  });
});

/** Requests answered at once, without limits, while the store is down: 200 for a good key, 401 (never 429) for bad ones. */
async function expectFailOpen(t: TestApp, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const res = await get(t, keys.alice!);
    expect(res.status).toBe(200);
    expect(res.headers.ratelimit).toBeUndefined();
    expect((await get(t, BAD_KEY)).status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1_500);
  }
}

/** The first request counted again after Redis came back (the client reconnects with backoff). */
async function untilCounted(t: TestApp): Promise<request.Response> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await get(t, keys.alice!);
    if (res.headers.ratelimit !== undefined || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function reachable(host: string, port: number): Promise<boolean> {
  const socket = net.connect(port, host);
  socket.setTimeout(1_000);
  try {
    await Promise.race([once(socket, "connect"), once(socket, "timeout").then(() => Promise.reject(new Error("timeout")))]);
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** A TCP proxy to Redis that the test can take away, cutting every connection through it. */
async function tcpProxy(port: number, host: string, targetPort: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on("close", () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  return {
    async close() {
      const closed = once(server, "close");
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
