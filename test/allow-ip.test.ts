import { once } from "node:events";
import net from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressAllowList } from "../src/auth/address-allow-list.js";
import { KeyCache } from "../src/auth/key-cache.js";
import { runCli } from "../src/cli/cli.js";
import { hashApiKey } from "../src/core/api-keys.js";
import { createLogger } from "../src/core/logger.js";
import { type Database, openDatabase } from "../src/db/database.js";
import type { RefusedAddress } from "../src/http/deps.js";
import { keepKeyCacheInSync } from "../src/users/key-invalidation.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";

/**
 * Per-user allow-lists of client addresses. Clients are simulated behind a
 * trusted proxy (TRUST_PROXY=loopback: the test connects from 127.0.0.1)
 * naming them in X-Forwarded-For.
 */
const quiet = createLogger("silent");
const NOT_ALLOWED = { code: 403, message: "This API user may not call the API from this client address" };

let database: TestDatabase;
let cache: KeyCache;
let sync: { stop(): Promise<void> };
let t: TestApp;
let cliDb: Database;
const refused: RefusedAddress[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cache = new KeyCache();
  sync = await keepKeyCacheInSync(database.db, cache, quiet);
  t = await startTestApp({
    database,
    keyCache: cache,
    env: { TRUST_PROXY: "loopback", CALLERS_USER_A: "user-A,office,roaming,cached,narrow" },
    onRefusedAddress: (event) => {
      refused.push(event);
      return Promise.resolve();
    },
  });
  // The operator's CLI: a process of its own (its own pool on PostgreSQL), no key cache.
  cliDb = database.url ? openDatabase({ kind: "postgres", url: database.url, poolMax: 1 }) : database.db;
});
afterAll(async () => {
  await sync.stop();
  await t.close();
  if (database.url) await cliDb.close();
  await database.drop();
});

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    argv,
    { config: t.config, db: cliDb, logger: quiet },
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    },
  );
  return { code, stdout, stderr };
}

const from = (address: string | undefined, key: string, path = "/api/player/get-all-players") => {
  const req = request(t.url).get(path).set("X-API-Key", key);
  return address === undefined ? req : req.set("X-Forwarded-For", address);
};

/** Polls until the request answers `status`, for at most `ms`. */
async function within(ms: number, status: number, send: () => Promise<request.Response>): Promise<void> {
  const start = Date.now();
  for (;;) {
    if ((await send()).status === status) return;
    if (Date.now() - start > ms) throw new Error(`still not ${status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a user with an allow-list of addresses", () => {
  it("when the key comes from an allowed address (IPv4, IPv6, IPv4-mapped), then it passes; from elsewhere, 403", async () => {
    const key = await t.key("office");
    expect((await cli("user", "allow-ip", "office", "203.0.113.0/24,2001:db8::/32", "198.51.100.7")).code).toBe(0);
    for (const ok of ["203.0.113.7", "203.0.113.255", "::ffff:203.0.113.9", "2001:db8::1", "2001:db8:ffff::5", "198.51.100.7", "10.0.0.1, 203.0.113.8"]) {
      expect((await from(ok, key)).status, ok).toBe(200);
    }
    for (const bad of ["198.51.100.8", "203.0.114.1", "2001:db9::1", "::ffff:198.51.100.8", "not-an-address", "203.0.113.7, 10.0.0.1", undefined]) {
      const res = await from(bad, key);
      expect(res.status, String(bad)).toBe(403);
      expect(res.body).toEqual(NOT_ALLOWED);
    }
  });

  it("when a request is refused, then a warn line names the user and address (not the key) and the audit hook gets it", async () => {
    const key = await t.key("narrow");
    await cli("user", "allow-ip", "narrow", "192.0.2.1");
    const before = refused.length;
    const res = await from("192.0.2.2", key);
    expect(res.status).toBe(403);
    const requestId = res.headers["x-request-id"];
    expect(refused.slice(before)).toEqual([{ username: "narrow", clientAddress: "192.0.2.2", requestId }]);
    const line = t.logs.lines.find((l) => l.reqId === requestId && l.level === 40);
    expect(line).toMatchObject({ user: "narrow", clientAddress: "192.0.2.2", msg: "API key used from a client address not allowed for its user" });
    expect(t.logs.raw.join("\n")).not.toContain(key.slice(4));
    // The answer does not tell the caller which addresses would pass.
    expect(res.text).not.toContain("192.0.2.1");
  });

  it("when the key is unknown, then 401 comes first; when the address is allowed but the route is not, the route's 403", async () => {
    const key = await t.key("roaming");
    await cli("user", "allow-ip", "roaming", "198.51.100.0/24");
    expect((await from("192.0.2.99", "gsk_" + "q".repeat(43))).status).toBe(401);
    const allowed = await request(t.url)
      .patch("/api/freebuild/update-world")
      .set({ "X-API-Key": key, "X-Forwarded-For": "198.51.100.1" })
      .send({ id: 2_000_000_000, tag: "x" });
    expect(allowed.body).toEqual({ code: 404, message: "World not found" });
    const forbiddenRoute = await request(t.url)
      .get("/api/player/get-all-players")
      .set({ "X-API-Key": await t.key("nobody-group"), "X-Forwarded-For": "198.51.100.1" });
    expect(forbiddenRoute.body).toMatchObject({ code: 403, message: expect.stringMatching(/^This API user is in no caller group/) });
  });

  it("when a key keeps being used from a refused address, then that address gets 429 once over AUTH_FAILURES_PER_MINUTE, like a bad key", async () => {
    const limited = await startTestApp({ database, env: { TRUST_PROXY: "loopback", AUTH_FAILURES_PER_MINUTE: "2", CALLERS_USER_A: "user-A,leaked" } });
    try {
      const key = await limited.key("leaked");
      await cli("user", "allow-ip", "leaked", "192.0.2.0/24");
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await request(limited.url).get("/api/player/get-all-players").set({ "X-API-Key": key, "X-Forwarded-For": "198.51.100.66" })).status);
      }
      expect(statuses).toEqual([403, 403, 429, 429]);
      // The allowed address is another address: unaffected.
      expect((await request(limited.url).get("/api/player/get-all-players").set({ "X-API-Key": key, "X-Forwarded-For": "192.0.2.5" })).status).toBe(200);
      // Two refusals recorded, not four: a leaked key cannot fill the audit log.
      const entries = await database.db.prisma.auditLog.count({ where: { action: "api_user.refused_ip", actor: "leaked" } });
      expect(entries).toBe(2);
    } finally {
      await limited.close();
    }
  });

  it("when the client hangs up before its 403 is sent, then the refusal still counts toward the address's limit", async () => {
    const limited = await startTestApp({ database, env: { TRUST_PROXY: "loopback", AUTH_FAILURES_PER_MINUTE: "3", CALLERS_USER_A: "user-A,hangs-up" } });
    try {
      const key = await limited.key("hangs-up");
      await cli("user", "allow-ip", "hangs-up", "192.0.2.0/24");
      const refusals = () => database.db.prisma.auditLog.count({ where: { action: "api_user.refused_ip", actor: "hangs-up" } });
      const port = Number(new URL(limited.url).port);
      // Each request is written, then the connection reset before the answer can be read.
      for (let i = 0; i < 30 && (await refusals()) < 3; i++) {
        const socket = net.connect(port, "127.0.0.1");
        await once(socket, "connect");
        socket.write(`GET /api/parkour/get-all-maps HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nX-Forwarded-For: 198.51.100.77\r\n\r\n`);
        await new Promise((r) => setTimeout(r, 1));
        socket.resetAndDestroy();
        await new Promise((r) => setTimeout(r, 30));
      }
      expect(await refusals()).toBe(3);
      // Counted when authentication decided, before the refusal was recorded: the three entries above show it.
      const next = await request(limited.url).get("/api/parkour/get-all-maps").set({ "X-API-Key": key, "X-Forwarded-For": "198.51.100.77" });
      expect(next.status).toBe(429);
      expect(await refusals()).toBe(3);
    } finally {
      await limited.close();
    }
  });

  it("when the list is changed or cleared from the CLI, then the key (cached in memory) follows at once", async () => {
    const key = await t.key("cached");
    expect((await from("198.51.100.50", key)).status).toBe(200);
    expect(cache.get(hashApiKey(key))?.username).toBe("cached");

    expect((await cli("user", "allow-ip", "cached", "203.0.113.0/24")).code).toBe(0);
    await within(1000, 403, () => from("198.51.100.50", key));
    expect((await from("203.0.113.1", key)).status).toBe(200);
    expect(cache.get(hashApiKey(key))?.allowedAddresses?.entries).toEqual(["203.0.113.0/24"]);

    const cleared = await cli("user", "allow-ip", "cached", "--any");
    expect(cleared).toMatchObject({ code: 0, stdout: "The key of 'cached' now works from any address.\n" });
    await within(1000, 200, () => from("198.51.100.50", key));
  });
});

describe("user allow-ip (CLI)", () => {
  it("when given addresses, then it stores their canonical form and user list shows them", async () => {
    await t.key("listed");
    const set = await cli("user", "allow-ip", "listed", " 10.0.0.0/8 , 2001:DB8::/32,::ffff:192.0.2.1,192.0.2.1");
    expect(set).toMatchObject({
      code: 0,
      stdout: "The key of 'listed' now works only from 10.0.0.0/8, 2001:db8::/32, 192.0.2.1/32.\n",
    });
    const rows = JSON.parse((await cli("user", "list", "--json")).stdout) as Record<string, string>[];
    expect(rows.find((r) => r.username === "listed")?.["allowed ips"]).toBe("10.0.0.0/8,2001:db8::/32,192.0.2.1/32");
    expect(rows.find((r) => r.username === "office")?.["allowed ips"]).not.toBe("any");
    expect((await cli("user", "list")).stdout).toMatch(/listed .*10\.0\.0\.0\/8,2001:db8::\/32,192\.0\.2\.1\/32/);
    await cli("user", "allow-ip", "listed", "--any");
    expect((await cli("user", "list")).stdout).toMatch(/listed .* any\n/);
    // Host bits set in a block are cleared, so the listing says what the block allows.
    const widened = await cli("user", "allow-ip", "listed", "10.1.2.3/8,2001:db8:0:0:1:0:0:1/64");
    expect(widened.stdout).toBe("The key of 'listed' now works only from 10.0.0.0/8, 2001:db8::/64.\n");
  });

  it("when an entry is not an address or CIDR, then exit 1 naming each bad one, and nothing changes", async () => {
    await t.key("strict");
    await cli("user", "allow-ip", "strict", "192.0.2.0/24");
    const res = await cli("user", "allow-ip", "strict", "10.0.0.0/33,example.org,2001:db8::/129,,fe80::1%eth0,10.0.0.1/8/1,10.0.0.0/x");
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      "Invalid allowed addresses, nothing changed: " +
        "'10.0.0.0/33': the prefix length must be 0 to 32 for an IPv4 address; " +
        "'example.org': 'example.org' is not an IPv4 or IPv6 address; " +
        "'2001:db8::/129': the prefix length must be 0 to 128 for an IPv6 address; " +
        "empty entry (a stray comma?); " +
        "'fe80::1%eth0': 'fe80::1%eth0' is not an IPv4 or IPv6 address; " +
        "'10.0.0.1/8/1': expected an address or address/prefix; " +
        "'10.0.0.0/x': the prefix length must be 0 to 32 for an IPv4 address\n",
    );
    const rows = JSON.parse((await cli("user", "list", "--json")).stdout) as Record<string, string>[];
    expect(rows.find((r) => r.username === "strict")?.["allowed ips"]).toBe("192.0.2.0/24");
  });

  it("when the user is unknown or the arguments are wrong, then it says so", async () => {
    expect(await cli("user", "allow-ip", "ghost", "10.0.0.1")).toMatchObject({ code: 1, stderr: "API user 'ghost' not found\n" });
    expect((await cli("user", "allow-ip", "strict")).code).toBe(2);
    expect((await cli("user", "allow-ip", "strict", "10.0.0.1", "--any")).code).toBe(2);
    expect((await cli("user", "allow-ip")).code).toBe(2);
  });
});

describe("AddressAllowList", () => {
  it("when checking addresses, then plain addresses are /32 or /128 and IPv4-mapped IPv6 is IPv4 on both sides", () => {
    const list = AddressAllowList.parse("192.0.2.1,::ffff:198.51.100.0/120,2001:db8::1,0.0.0.0/0").list!;
    expect(list.entries).toEqual(["192.0.2.1/32", "198.51.100.0/24", "2001:db8::1/128", "0.0.0.0/0"]);
    expect(list.allows("::ffff:10.1.2.3")).toBe(true);
    expect(list.allows("2001:db8::1")).toBe(true);
    expect(list.allows("2001:db8::2")).toBe(false);
    expect(list.allows("fe80::1%eth0")).toBe(false);
    expect(list.allows(undefined)).toBe(false);
    expect(list.allows("")).toBe(false);
    const v6 = AddressAllowList.parse("fe80::/10").list!;
    expect(v6.allows("fe80::1%eth0")).toBe(true);
    expect(v6.allows("10.0.0.1")).toBe(false);
    expect(AddressAllowList.nowhere().allows("127.0.0.1")).toBe(false);
  });
});
