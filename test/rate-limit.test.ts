import { createHash, randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KeyCache } from "../src/auth/key-cache.js";
import type { RateLimitKind } from "../src/limits/rate-limit.js";
import { REDIS_RETRY_MS } from "../src/limits/rate-limit-store.js";
import { Metrics } from "../src/service/metrics.js";
import { ApiUsers } from "../src/users/users.js";
import { startTestApp, type TestApp, type TestAppOptions } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";
import { REDIS_URL, redisAvailable } from "./helpers/redis.js";
import { TcpProxy } from "./helpers/tcp-proxy.js";

/** The Redis the counters are shared through (helpers/redis.ts); its tests run only when one is named. */
const redisPort = Number(new URL(REDIS_URL).port || 6379);
const redisHost = new URL(REDIS_URL).hostname;

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
      expect(res.headers["ratelimit-policy"]).toBe('"user"; q=5; w=60');
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

  it("when different users call, then RateLimit-Policy is the same for each: nothing in it can be traced back to a user", async () => {
    const t = await app({ RATE_LIMIT_PER_MINUTE: "50" });
    const ids = await database.db.prisma.apiUser.findMany({ where: { username: { in: [...USERS] } }, select: { id: true } });
    const policies = new Set<string>();
    for (const name of USERS) policies.add(String((await get(t, keys[name]!)).headers["ratelimit-policy"]));
    expect([...policies]).toEqual(['"user"; q=50; w=60']);
    // express-rate-limit's own partition key: base64 of the first 12 hex digits of SHA-256(user id).
    for (const { id } of ids) {
      const pk = Buffer.from(createHash("sha256").update(String(id)).digest("hex").slice(0, 12)).toString("base64");
      expect([...policies][0]).not.toContain(pk);
    }
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
  it("when an address has sent AUTH_FAILURES_PER_MINUTE bad keys, then those get 429 with Retry-After, a valid key from it still passes, and other addresses are not affected", async () => {
    const limited: RateLimitKind[] = [];
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "loopback" }, { onRateLimited: (kind) => limited.push(kind) });
    const shared = "203.0.113.7";
    expect((await get(t, BAD_KEY, shared)).status).toBe(401);
    expect((await request(t.url).get(MAPS).set("X-Forwarded-For", shared)).status).toBe(401);
    // The 405 path checks keys too: its failures count, or it would be an open oracle.
    expect((await request(t.url).put(MAPS).set("X-API-Key", BAD_KEY).set("X-Forwarded-For", shared)).status).toBe(401);

    const refused = await get(t, BAD_KEY, shared);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 429,
      message: expect.stringMatching(/^Too many requests with an invalid API key from this address; retry in \d+ s$/),
    });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect((await request(t.url).get(MAPS).set("X-Forwarded-For", shared)).status).toBe(429);
    expect((await request(t.url).put(MAPS).set("X-API-Key", BAD_KEY).set("X-Forwarded-For", shared)).status).toBe(429);

    // The other servers behind the same address are not locked out.
    expect((await get(t, keys.alice!, shared)).status).toBe(200);
    expect((await request(t.url).put(MAPS).set("X-API-Key", keys.bob!).set("X-Forwarded-For", shared)).status).toBe(405);
    // Another bad key, never tried from here: checked, and refused with 429 like the others.
    expect((await get(t, `gsk_${"B".repeat(43)}`, shared)).status).toBe(429);

    const neighbour = "203.0.113.8";
    expect((await get(t, BAD_KEY, neighbour)).status).toBe(401);
    expect(limited).toEqual(["address", "address", "address", "address"]);
  });

  it("when an address has tried AUTH_FAILURES_PER_MINUTE different bad keys (guessing), then only keys this instance already knows pass, and any other key gets 429 unchecked", async () => {
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "loopback" }, { keyCache: new KeyCache() });
    const guesser = "203.0.113.9";
    expect((await get(t, keys.alice!, "198.51.100.9")).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(t, `gsk_${randomBytes(32).toString("base64url")}`, guesser)).status).toBe(401);
    expect((await get(t, `gsk_${randomBytes(32).toString("base64url")}`, guesser)).status).toBe(429);
    // Valid, but this instance has not seen it yet: to look it up would give the guesser its oracle back.
    expect((await get(t, keys.carol!, guesser)).status).toBe(429);
    expect((await get(t, keys.alice!, guesser)).status).toBe(200);
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
    expect((await get(t, BAD_KEY, client)).status).toBe(429);
    expect((await get(t, keys.alice!, client)).status).toBe(200);
  });

  it("when X-Forwarded-For is sent but TRUST_PROXY is off, then it is not believed: the connection's address is limited", async () => {
    const t = await app({ AUTH_FAILURES_PER_MINUTE: "2" });
    expect((await get(t, BAD_KEY, "203.0.113.1")).status).toBe(401);
    expect((await get(t, BAD_KEY, "203.0.113.2")).status).toBe(401);
    expect((await get(t, BAD_KEY, "203.0.113.3")).status).toBe(429);
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
  const proxies: TcpProxy[] = [];
  const newPrefix = () => {
    const prefix = `rl-test:${randomBytes(6).toString("hex")}:`;
    prefixes.push(prefix);
    return prefix;
  };
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    for (const proxy of proxies.splice(0)) await proxy.close();
    for (const prefix of prefixes.splice(0)) {
      const found = await redis.keys(`${prefix}*`);
      if (found.length > 0) await redis.del(...found);
    }
  });
  afterAll(async () => {
    await redis.quit();
  });

  it("when two instances share REDIS_URL, then they share each user's and each address's counters, and no key can be read from Redis", async () => {
    const rateLimitPrefix = newPrefix();
    const env = { REDIS_URL, RATE_LIMIT_PER_MINUTE: "4", AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "loopback", REDIS_KEY_PREFIX: rateLimitPrefix };
    const one = await app(env);
    const two = await app(env);
    for (const t of [one, two, one, two]) expect((await get(t, keys.bob!)).status).toBe(200);
    expect((await get(one, keys.bob!)).status).toBe(429);
    expect((await get(two, keys.bob!)).status).toBe(429);
    expect((await get(two, keys.carol!)).status).toBe(200);

    const guesser = "203.0.113.50";
    expect((await get(one, BAD_KEY, guesser)).status).toBe(401);
    expect((await get(two, BAD_KEY, guesser)).status).toBe(401);
    // A failure is counted as authentication decides it, without holding its 401 (rate-limit.ts): instance two's
    // must be in Redis before instance one is asked again (CI once asked first, and got a 401).
    for (const until = Date.now() + 10_000; Number(await redis.get(`${rateLimitPrefix}auth:${guesser}`)) < 2 && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await get(one, BAD_KEY, guesser)).status).toBe(429);
    expect((await get(two, keys.carol!, guesser)).status).toBe(200);

    const stored = (await redis.keys(`${rateLimitPrefix}*`)).sort();
    const ids = await database.db.prisma.apiUser.findMany({ where: { username: { in: ["bob", "carol"] } }, select: { id: true } });
    const fingerprint = stored
      .find((k) => k.startsWith(`${rateLimitPrefix}auth:key:${guesser}:`))
      ?.split(":")
      .pop();
    expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(stored).toEqual(
      [
        `${rateLimitPrefix}auth:${guesser}`,
        `${rateLimitPrefix}auth:key:${guesser}:${fingerprint}`,
        `${rateLimitPrefix}auth:keys:${guesser}`,
        ...ids.map(({ id }) => `${rateLimitPrefix}user:${id}`),
      ].sort(),
    );
    // Neither the key nor the hash the database keeps for it.
    expect(createHash("sha256").update(BAD_KEY).digest("hex")).not.toContain(fingerprint);
  });

  it("when an instance holds a slice of a user's window, then that user's requests with a key it knows cost no command to Redis", async () => {
    const rateLimitPrefix = newPrefix();
    // Keys held in memory, as the server holds them (server.ts). A slice is 1 % of the limit: 100 requests.
    const t = await app(
      { REDIS_URL, RATE_LIMIT_PER_MINUTE: "10000", AUTH_FAILURES_PER_MINUTE: "10", REDIS_KEY_PREFIX: rateLimitPrefix },
      { keyCache: new KeyCache() },
    );
    // The first request checks the key in the database and takes a slice; the second reads the address's failures once.
    for (let i = 0; i < 2; i++) expect((await get(t, keys.alice!)).status).toBe(200);
    const monitor = await redis.monitor();
    const sent: string[][] = [];
    // Commands a script runs come from "lua"; the client's own from its address.
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (!source.includes("lua") && args.some((a) => a.startsWith(rateLimitPrefix))) sent.push(args);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 3; i++) {
      const res = await get(t, keys.alice!);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"user"; r=${10000 - 3 - i}; t=\\d+$`));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    monitor.disconnect();
    expect(sent).toEqual([]);
  });

  it("when 40 requests of one user arrive at once, then exactly the budget passes, each with its own remaining count, and Redis holds the budget spent", async () => {
    const rateLimitPrefix = newPrefix();
    const t = await app(
      { REDIS_URL, RATE_LIMIT_PER_MINUTE: "25", AUTH_FAILURES_PER_MINUTE: "10", REDIS_KEY_PREFIX: rateLimitPrefix },
      { keyCache: new KeyCache() },
    );
    expect((await get(t, keys.dave!)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${t.url}${MAPS}`, { headers: { "X-API-Key": keys.dave! } })));
    const passed = answers.filter((r) => r.status === 200);
    expect(passed).toHaveLength(24);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(16);
    const remaining = passed.map((r) => Number(/r=(\d+)/.exec(r.headers.get("ratelimit")!)![1])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 24 }, (_, i) => i));
    const [dave] = await database.db.prisma.apiUser.findMany({ where: { username: "dave" }, select: { id: true } });
    expect(await redis.get(`${rateLimitPrefix}user:${dave!.id}`)).toBe("25");
  });

  it("when one user's requests pour into two instances at once, then together they never pass more than the limit, and what one held unused goes back to the other", async () => {
    const rateLimitPrefix = newPrefix();
    // A slice is 5 requests: each instance takes them from Redis 5 at a time, and holds up to 7 ahead.
    const limit = 500;
    const env = { REDIS_URL, RATE_LIMIT_PER_MINUTE: String(limit), AUTH_FAILURES_PER_MINUTE: "10", REDIS_KEY_PREFIX: rateLimitPrefix };
    const one = await app(env, { keyCache: new KeyCache() });
    const two = await app(env, { keyCache: new KeyCache() });
    const [carol] = await database.db.prisma.apiUser.findMany({ where: { username: "carol" }, select: { id: true } });
    const counter = `${rateLimitPrefix}user:${carol!.id}`;
    // 16 at a time on each instance; instance one stops after 200 requests, two goes on until it is refused.
    const pour = async (t: TestApp, count: number, untilRefused: boolean) => {
      const statuses: number[] = [];
      while (statuses.length < count) {
        const batch = await Promise.all(Array.from({ length: 16 }, () => fetch(`${t.url}${MAPS}`, { headers: { "X-API-Key": keys.carol! } })));
        for (const res of batch) {
          await res.arrayBuffer();
          statuses.push(res.status);
        }
        if (untilRefused && statuses.includes(429)) break;
      }
      return statuses;
    };
    const [fromOne, fromTwo] = await Promise.all([pour(one, 200, false), pour(two, 1_000, true)]);
    const passed = [...fromOne, ...fromTwo].filter((s) => s === 200).length;
    expect([...fromOne, ...fromTwo].every((s) => s === 200 || s === 429)).toBe(true);
    // Never more than the limit. Fewer only by what instance one still holds: at most one and a half slices.
    expect(passed).toBeLessThanOrEqual(limit);
    expect(passed).toBeGreaterThanOrEqual(limit - 8);
    expect(Number(await redis.get(counter))).toBeLessThanOrEqual(limit);
    // Idle for a second, instance one gives back what it held: instance two lets exactly that many more through.
    const deadline = Date.now() + 10_000;
    while (Number(await redis.get(counter)) !== passed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(Number(await redis.get(counter))).toBe(passed);
    // Instance two was told the budget was spent: it asks Redis again after a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = await pour(two, 16, false);
    expect(after.filter((s) => s === 200)).toHaveLength(limit - passed);
    expect(await redis.get(counter)).toBe(String(limit));
  });

  it("when Redis is unreachable, then each instance counts in its own memory and the limits still answer 429, at once; when it is back, the instances share one budget again", async () => {
    const rateLimitPrefix = newPrefix();
    const proxy = await new TcpProxy(redisHost, redisPort).listen();
    proxies.push(proxy);
    proxy.cut();
    const env = {
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      RATE_LIMIT_PER_MINUTE: "3",
      AUTH_FAILURES_PER_MINUTE: "1",
      TRUST_PROXY: "loopback",
      REDIS_KEY_PREFIX: rateLimitPrefix,
    };
    const metrics = new Metrics(undefined, { processMetrics: false });
    const one = await app(env, { metrics });
    const two = await app(env);

    // Down from the start: each instance has its own budget of 3.
    for (const t of [one, two]) {
      await expectAtOnce(t, keys.alice!, [200, 200, 200, 429]);
      await expectAtOnce(t, BAD_KEY, [401, 429], "198.51.100.30");
    }
    expect((await metrics.text()).body).toContain("rate_limit_counting_locally 1");
    for (const t of [one, two]) {
      expect(t.logs.lines.filter((l) => l.level === 40 && String(l.msg).includes("each instance counts in its own memory"))).toHaveLength(1);
    }

    proxy.restore();
    for (const t of [one, two]) await untilLogged(t, "Redis reachable again: rate limits are shared again");
    // One budget of 3 for both instances again.
    for (const [t, status] of [
      [one, 200],
      [two, 200],
      [one, 200],
      [two, 429],
    ] as const)
      expect((await get(t, keys.bob!)).status).toBe(status);
    expect((await metrics.text()).body).toContain("rate_limit_counting_locally 0");

    // Down again while connected: counted in memory again, from zero.
    proxy.cut();
    await expectAtOnce(one, keys.carol!, [200, 200, 200, 429]);
  });

  it("when Redis stops answering on an open connection, then a request waits at most its command timeout, the next ones count in memory without trying Redis, and the limit still holds", async () => {
    const proxy = await new TcpProxy(redisHost, redisPort).listen();
    proxies.push(proxy);
    const t = await app({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_PER_MINUTE: "6", REDIS_KEY_PREFIX: newPrefix() });
    expect((await get(t, keys.dave!)).status).toBe(200);
    proxy.stall();
    // Counted afresh in memory: six pass, the seventh is refused (it would pass if the limit failed open).
    await expectAtOnce(t, keys.dave!, [200, 200, 200, 200, 200, 200, 429], undefined, proxy);
  });
});

/**
 * Sends `key` once per expected status, checking each answer. None may wait on Redis: with `stalled` (a proxy
 * whose Redis hangs), a request that asked it something (and so waited its command timeout) must be the first,
 * or come REDIS_RETRY_MS after the last one that did: Redis is left alone meanwhile. Counted, not timed: a
 * loaded machine only spaces requests further. Without it (Redis refusing connections), a bound far above a
 * request's time, far below what a command queued until Redis comes back would wait.
 */
async function expectAtOnce(t: TestApp, key: string, statuses: number[], from?: string, stalled?: TcpProxy): Promise<void> {
  let askedAt: number | undefined;
  for (const status of statuses) {
    const started = Date.now();
    const before = stalled?.stalledBytes;
    const res = await get(t, key, from);
    expect(res.status).toBe(status);
    if (stalled && stalled.stalledBytes > before!) {
      if (askedAt !== undefined) expect(started - askedAt, "Redis asked again before REDIS_RETRY_MS").toBeGreaterThanOrEqual(REDIS_RETRY_MS);
      askedAt = started;
    }
    if (!stalled) expect(Date.now() - started).toBeLessThan(5_000);
  }
  if (stalled) expect(askedAt, "the stalled Redis was never asked").toBeDefined();
}

/** Waits (at most 15 s: the client reconnects with backoff) until the app has logged `message`. */
async function untilLogged(t: TestApp, message: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!t.logs.lines.some((l) => l.msg === message)) {
    if (Date.now() > deadline) throw new Error(`not logged within 15 s: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
