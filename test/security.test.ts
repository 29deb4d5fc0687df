import { randomBytes } from "node:crypto";
import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { OPERATOR } from "../src/audit/audit.js";
import { runCli } from "../src/cli/cli.js";
import { hashApiKey } from "../src/core/api-keys.js";
import { createLogger } from "../src/core/logger.js";
import { defineRoute, type RouteSpec } from "../src/http/route.js";
import { startSeason } from "../src/leaderboards/periods.js";
import { apiRoutes } from "../src/resources/index.js";
import { createApp } from "../src/service/app.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makeCosmetic, makePlayer, makeWorld, unique } from "./helpers/fixtures.js";
import { EXPECTED_SECURITY_HEADERS } from "./helpers/security-headers.js";
import { EXPIRED_EVENT_ID } from "./helpers/sse.js";

/**
 * Security properties that hold across all routes; docs/SECURITY.md maps
 * them to the OWASP API Security Top 10. Properties proven elsewhere (the
 * allow-list per route in auth.test.ts, body and query fuzzing in
 * routes/fuzz.test.ts) are not repeated here.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

let t: TestApp;
let key: string;
let keyB: string;
/** Valid inputs per route, so that a probe gets past validation to the handler. */
type Input = { query?: Record<string, string>; body?: Record<string, unknown> | string };
const valid: Record<string, Input> = {};
let player: { id: number; token: string; ip: string; pseudo: string };
let cosmeticId: number;
let worldId: number;

beforeAll(async () => {
  t = await startTestApp({
    // Rate limits off: this file sends many requests from one user and one address on purpose.
    env: { RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURES_PER_MINUTE: "0", TRUST_PROXY: "loopback", CALLERS_USER_A: "user-A,pinned" },
  });
  key = await t.key("user-A");
  keyB = await t.key("user-B");
  const prisma = t.database.db.prisma;
  const p = await makePlayer(prisma, {
    nickname: unique("nick"),
    gradeId: 4242,
    token: `tok-${randomBytes(8).toString("hex")}`,
    ip: "198.51.100.231",
    totalTimeConnection: 987.25,
    firstConnection: new Date("2019-03-04T05:06:07Z"),
  });
  player = { id: p.id, token: p.token, ip: p.ip, pseudo: p.pseudo };
  cosmeticId = (await makeCosmetic(prisma)).id;
  worldId = (await makeWorld(prisma, { ownerId: p.id })).id;
  await prisma.infectedStats.create({ data: { playerId: p.id, kill: 3 } });
  await prisma.parkourMap.create({ data: { name: unique("map") } });
  await prisma.temporaryItem.create({
    data: { itemName: "Sale", itemDescription: "", price: 1, startDate: new Date("2000-01-01T00:00:00Z"), endDate: new Date("2999-01-01T00:00:00Z") },
  });
  // A webhook endpoint to remove, and a failed delivery to redeliver (to another endpoint).
  const removable = await prisma.webhookEndpoint.create({ data: { url: "https://203.0.113.10/removed", secret: "plain:whsec_x", events: ["none.ever"] } });
  const kept = await prisma.webhookEndpoint.create({ data: { url: "https://203.0.113.10/kept", secret: "plain:whsec_x", events: ["none.ever"] } });
  const event = await prisma.webhookEvent.create({ data: { type: "form.created", data: "{}" } });
  const failed = await prisma.webhookDelivery.create({ data: { eventId: event.id, endpointId: kept.id, status: "failed", attempts: 3 } });
  const answers = { video: "v", question1: "1", question2: "2", question3: "3", question4: "4", question5: "5" };
  Object.assign(valid, {
    "/player/get-all-full-players-by-gradeId": { query: { gradeId: "4242" } },
    "/player/get-player-by-nick": { query: { nick: p.pseudo } },
    "/cosmetic/get-cosmetic": { query: { id: String(cosmeticId) } },
    "/cosmetic/update-cosmetic": { body: { id: cosmeticId, price: 5 } },
    "/form/create-form": { body: { playerId: p.id, ...answers } },
    "/website/create-reward-log": { body: { playerId: p.id, rewardId: 1 } },
    "/inscription": { body: { username: "probe-user" } },
    "/freebuild/update-world": { body: { id: worldId, state: "loaded" } },
    "/admin/users/rotate-key": { body: { username: "admin-target", graceSeconds: 0 } },
    "/admin/users/revoke": { body: { username: "admin-target" } },
    "/admin/users/allowed-addresses": { body: { username: "admin-target", allowedAddresses: null } },
    "/admin/webhooks/add": { body: { url: "https://93.184.215.14/hook", events: ["form.created"] } },
    "/admin/webhooks/remove": { body: { endpointId: removable.id } },
    "/admin/webhooks/redeliver": { body: { deliveryId: String(failed.id) } },
    "/admin/players/export": { body: { pseudo: p.pseudo } },
    "/admin/players/erase": { body: { id: (await makePlayer(t.database.db.prisma)).id } },
    "/infecte2/get-leaderboard": { query: { stat: "kill" } },
    "/infecte2/get-leaderboard-rank": { query: { stat: "kill", playerId: String(p.id) } },
    "/infecte2/get-leaderboard-around": { query: { stat: "kill", playerId: String(p.id), k: "2" } },
    "/admin/seasons/start": { body: { name: unique("season") } },
    "/admin/seasons/end": { body: { name: (await startSeason(prisma, { name: unique("season") }, OPERATOR)).key } },
  });
  await t.key("admin-target");
});
afterAll(() => t.close());

const routeName = (r: RouteSpec) => `${r.method} ${r.path}`;

/** Sends the route's valid input (or `input`); a body given as text goes as it is, with the Content-Type of `headers`. */
function call(route: RouteSpec, headers: Record<string, string | string[]> = {}, input: Input = valid[route.path] ?? {}) {
  const agent = request(t.url);
  const url = `/api${route.path}`;
  const req = route.method === "GET" ? agent.get(url) : route.method === "POST" ? agent.post(url) : agent.patch(url);
  // The event stream never ends: an expired resume point makes it a 410 once the key and the caller passed.
  if (route.eventStream) req.set("Last-Event-ID", EXPIRED_EVENT_ID);
  for (const [name, value] of Object.entries(headers)) req.set(name, value as string);
  if (input.query) req.query(input.query);
  return input.body === undefined ? req : req.send(input.body);
}

/** The parts of a response a client can tell apart, minus the ones that differ by nature. */
function fingerprint(res: request.Response) {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !["date", "x-request-id", "connection", "keep-alive"].includes(name)));
  return { status: res.status, headers, body: res.text };
}

describe("uniform 401", () => {
  it("when the key is missing, malformed, unknown, revoked, rotated away, sent twice differently or in a header sent twice, then every route answers the same bytes", async () => {
    const other = keyB;
    const revoked = await t.key("revoked-user");
    await t.users.revoke("revoked-user");
    const rotatedAway = await t.key("rotated-user");
    await t.users.rotate("rotated-user", undefined, 0);
    const variants: Record<string, Record<string, string | string[]>> = {
      missing: {},
      "empty X-API-Key": { "X-API-Key": "" },
      malformed: { "X-API-Key": "not-a-key" },
      "malformed, key-shaped": { "X-API-Key": `gsk_${"!".repeat(43)}` },
      "Authorization of another scheme": { Authorization: `Basic ${Buffer.from("user-A:pw").toString("base64")}` },
      "empty bearer": { Authorization: "Bearer " },
      unknown: { "X-API-Key": `gsk_${randomBytes(32).toString("base64url")}` },
      "unknown bearer": { Authorization: `Bearer gsk_${randomBytes(32).toString("base64url")}` },
      revoked: { "X-API-Key": revoked },
      "rotated away": { "X-API-Key": rotatedAway },
      "two different valid keys": { "X-API-Key": key, Authorization: `Bearer ${other}` },
      "X-API-Key twice": { "X-API-Key": [key, other] },
      "X-API-Key twice, the same key": { "X-API-Key": [key, key] },
      "Authorization twice": { Authorization: [`Bearer ${key}`, `Bearer ${other}`] },
      "Authorization twice, the same key": { Authorization: [`Bearer ${key}`, `Bearer ${key}`] },
      "Authorization twice, the second of another scheme": { Authorization: [`Bearer ${key}`, "Basic dXNlcjpwYXNz"] },
    };
    const seen = new Map<string, ReturnType<typeof fingerprint>>();
    for (const route of apiRoutes) {
      for (const [variant, headers] of Object.entries(variants)) {
        seen.set(`${routeName(route)} with ${variant}`, fingerprint(await call(route, headers)));
      }
    }
    const [first] = seen.values();
    expect(first).toMatchObject({ status: 401, body: '{"code":401,"message":"API key missing or invalid: send a valid key in the X-API-Key header"}' });
    expect(first!.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(first!.headers["content-length"]).toBe(String(Buffer.byteLength(first!.body)));
    for (const [what, print] of seen) expect(print, what).toEqual(first);
  });
});

describe("API keys are never kept in clear", () => {
  it("when keys are created, rotated and sent in headers, queries and bodies, then no log line and no database column holds one", async () => {
    const keys: string[] = [key];
    const prisma = t.database.db.prisma;
    // Created by the API, by the CLI, and rotated.
    const created = await request(t.url).post("/api/inscription").set("X-API-Key", key).send({ username: "via-api" });
    expect(created.status).toBe(201);
    keys.push(created.body.apiKey as string);
    let cliOut = "";
    await runCli(
      ["user", "create", "via-cli"],
      { config: t.config, db: t.database.db, logger: createLogger("silent") },
      {
        stdout: (s) => (cliOut += s),
        stderr: () => undefined,
      },
    );
    keys.push(cliOut.trim());
    keys.push((await t.users.rotate("via-cli")).apiKey);
    const stranger = `gsk_${randomBytes(32).toString("base64url")}`;
    keys.push(stranger);

    const api = () => request(t.url);
    for (const k of keys) {
      await api().get("/api/player/get-all-players").set("X-API-Key", k);
      await api().get("/api/player/get-all-players").set("Authorization", `Bearer ${k}`);
      await api().get("/api/player/get-player-by-nick").query({ nick: k }).set("X-API-Key", key);
      await api().get("/api/player/get-all-players").query({ apiKey: k }).set("X-API-Key", key);
      await api().post("/api/inscription").set("X-API-Key", key).send({ username: "someone", apiKey: k });
      await api().post("/api/inscription").set("X-API-Key", key).send({ username: k });
      await api()
        .patch("/api/cosmetic/update-cosmetic")
        .set({ "X-API-Key": key, "If-Match": `"${k}"` })
        .send({ id: cosmeticId, price: 1 });
      await api()
        .get("/api/player/get-all-players")
        .set({ "X-API-Key": key, "X-Request-Id": k, "X-Forwarded-For": k, "Idempotency-Key": k, "If-None-Match": `"${k}"` });
      const pasted = await api().get(`/api/no/such/route/${k}`).set("X-API-Key", k);
      expect(pasted.body).toEqual({ code: 404, message: "No route GET /api/no/such/route/gsk_[masked]" });
      // Percent-encoded, in part or whole, it is still the key.
      const encoded = `gsk%5F${[...k.slice(4)].map((c, i) => (i % 2 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c)).join("")}`;
      const pastedEncoded = await api().get(`/api/no/such/route/${encoded}`).set("X-API-Key", key);
      expect(pastedEncoded.body).toEqual({ code: 404, message: "No route GET /api/no/such/route/gsk_[masked]" });
    }

    const logs = t.logs.raw.join("\n");
    expect(t.logs.raw.length).toBeGreaterThan(keys.length * 9);
    for (const k of keys) {
      expect(logs).not.toContain(k.slice(4));
      expect(logs).not.toContain(k.slice(-8));
    }

    // Every text-like column of every table, whatever later migrations add.
    const columns = await prisma.$queryRaw<{ table: string; column: string }[]>`
      SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
       WHERE table_schema = current_schema() AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')
             OR udt_name = 'citext')`;
    expect(columns.map((c) => `${c.table}.${c.column}`)).toEqual(expect.arrayContaining(["api_users.keyHash", "api_users.username", "players.token"]));
    for (const { table, column } of columns) {
      for (const k of keys) {
        const sql = `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text LIKE '%' || $1 || '%'`;
        const [{ n }] = await prisma.$queryRawUnsafe<[{ n: number }]>(sql, k.slice(4));
        expect(n, `${table}.${column} holds a key`).toBe(0);
      }
    }
    // What is stored is the SHA-256 of the current key, and a hint too short to help.
    for (const [username, k] of [
      ["via-api", keys[1]!],
      ["via-cli", keys[3]!],
    ] as const) {
      const row = await prisma.apiUser.findUniqueOrThrow({ where: { username } });
      expect(row.keyHash).toBe(hashApiKey(k));
      expect(row.keyHint).toBe(k.slice(0, 8));
    }
  });
});

describe("key-shaped input in messages", () => {
  const keyShaped = () => `gsk_${randomBytes(32).toString("base64url")}`;
  const api = () => request(t.url);
  const expectMasked = (res: request.Response, status: number, sent: string, message: string) => {
    expect(res.status, res.text).toBe(status);
    expect(res.text).not.toContain(sent.slice(4));
    expect(res.body.message).toBe(message);
  };

  it("when a body field or a query parameter is named like a key, then the 400 names it masked", async () => {
    const field = keyShaped();
    const body = await api()
      .patch("/api/cosmetic/update-cosmetic")
      .set("X-API-Key", key)
      .send({ id: cosmeticId, price: 5, [field]: 1 });
    expectMasked(body, 400, field, "gsk_[masked]: unknown field");
    const query = await api()
      .get("/api/player/get-player-by-nick")
      .set("X-API-Key", key)
      .query({ nick: player.pseudo, [field]: "1" });
    expectMasked(query, 400, field, "gsk_[masked]: unknown field");
  });

  it("when a value that collides is key-shaped, then the 409 names it masked", async () => {
    const name = keyShaped();
    await makeCosmetic(t.database.db.prisma, { name });
    const other = await makeCosmetic(t.database.db.prisma);
    const res = await api().patch("/api/cosmetic/update-cosmetic").set("X-API-Key", key).send({ id: other.id, name });
    expectMasked(res, 409, name, "Cosmetic name 'gsk_[masked]' is already used (unique constraint cosmetics_name_key)");
    const username = `gsk_${randomBytes(12).toString("hex")}`;
    await api().post("/api/inscription").set("X-API-Key", key).send({ username });
    const again = await api().post("/api/inscription").set("X-API-Key", key).send({ username });
    expectMasked(again, 409, username, "Username 'gsk_[masked]' is already used (unique constraint api_users_username_key, case-insensitive)");
  });

  it("when a header value the message repeats is key-shaped (a charset), then the 415 names it masked", async () => {
    const charset = keyShaped();
    const res = await api()
      .post("/api/inscription")
      .set({ "X-API-Key": key, "Content-Type": `application/json; charset=${charset}` })
      .send('{"username":"x"}');
    expectMasked(res, 415, charset, 'Unsupported charset "gsk_[masked]"');
  });
});

describe("sensitive player fields", () => {
  const SENSITIVE = ["token", "ip", "firstConnection", "totalTimeConnection"];
  const FULL_ROUTE = "/api/player/get-all-full-players-by-gradeId";
  const EXPORT_ROUTE = "/admin/players/export";

  it("when every route answers, then token, ip, firstConnection and totalTimeConnection appear only in get-all-full-players-by-gradeId", async () => {
    const first = t.seen.length;
    const caller = keyB;
    // The event stream's data is the webhook body, whose players are summaries too (test/events.test.ts). A player's
    // export holds every field of theirs by design (test/player-export.test.ts).
    for (const route of apiRoutes.filter((r) => !r.eventStream && r.path !== EXPORT_ROUTE)) {
      const res = await call(route, { "X-API-Key": caller });
      expect(res.status, routeName(route)).toBeLessThan(400);
      // Failures too: a 404 for the player's token, a 400 naming a bad nick.
      if (route.path === "/player/get-player-by-nick") {
        await call(route, { "X-API-Key": caller }, { query: { nick: player.token } });
        await call(route, { "X-API-Key": caller }, { query: { nick: player.ip } });
      }
    }
    const responses = t.seen.slice(first);
    expect(new Set(responses.map((r) => r.path)).size).toBe(apiRoutes.length - 2);

    const full = responses.filter((r) => r.path === FULL_ROUTE);
    expect(full.every((r) => SENSITIVE.every((f) => JSON.stringify(r.body).includes(`"${f}":`)))).toBe(true);
    expect(JSON.stringify(full)).toContain(player.token);

    for (const r of responses.filter((res) => res.path !== FULL_ROUTE)) {
      const text = JSON.stringify(r.body);
      for (const field of SENSITIVE) expect(text, `${r.method} ${r.path}`).not.toContain(`"${field}":`);
      expect(text, `${r.method} ${r.path}`).not.toContain(player.token);
      expect(text, `${r.method} ${r.path}`).not.toContain(player.ip);
    }
  });

  it("when the full route is called by group C (not on its list), then 403 without any player data", async () => {
    const res = await request(t.url)
      .get(FULL_ROUTE)
      .query({ gradeId: "4242" })
      .set("X-API-Key", await t.key("user-C"));
    expect(res.body).toEqual({ code: 403, message: "This API user may not call this route" });
  });
});

describe("no mass assignment", () => {
  /** Fields a client must never set, whatever the route: ids, bookkeeping, secrets, prototypes. */
  const EXTRA = ["id", "version", "createdAt", "keyHash", "keyHint", "revokedAt", "allowedIps", "apiKey", "token", "ip", "isAdmin", "__proto__", "constructor"];
  const writeRoutes = apiRoutes.filter((r) => r.method !== "GET");

  const tables: Record<string, string> = {
    "/cosmetic/update-cosmetic": "cosmetics",
    "/form/create-form": "form_answers",
    "/website/create-reward-log": "reward_logs",
    "/inscription": "api_users",
    "/freebuild/update-world": "worlds",
    "/admin/users/rotate-key": "api_users",
    "/admin/users/revoke": "api_users",
    "/admin/users/allowed-addresses": "api_users",
    "/admin/webhooks/add": "webhook_endpoints",
    "/admin/webhooks/remove": "webhook_endpoints",
    "/admin/webhooks/redeliver": "webhook_deliveries",
    "/admin/players/export": "audit_log",
    "/admin/players/erase": "players",
    "/admin/seasons/start": "leaderboard_periods",
    "/admin/seasons/end": "leaderboard_periods",
  };
  /** The whole table as text: nothing written means nothing changed, not even a version. */
  const snapshot = async (table: string) =>
    JSON.stringify(await t.database.db.prisma.$queryRawUnsafe(`SELECT * FROM "${table}" ORDER BY 1`), (_k, v: unknown) =>
      typeof v === "bigint" ? v.toString() : v,
    );

  it("covers every write route", () => {
    expect(writeRoutes.map((r) => r.path).sort()).toEqual(Object.keys(tables).sort());
  });

  describe.each(writeRoutes.map((r) => [routeName(r), r] as const))("%s", (_name, route) => {
    // A PATCH names its record by id, and so may an export or an erasure: their id is no extra field.
    it.each(EXTRA.filter((f) => !(f === "id" && (route.method === "PATCH" || route.path.startsWith("/admin/players/")))))(
      "when the body also sets %s, then 400 naming it, and nothing is written",
      async (field) => {
        const table = tables[route.path]!;
        const before = await snapshot(table);
        // Raw JSON, so that "__proto__" travels as an own key, as an attacker would send it.
        const body = `${JSON.stringify(valid[route.path]!.body).slice(0, -1)},${JSON.stringify(field)}:${JSON.stringify(field === "id" ? 99 : "x")}}`;
        const res = await call(route, { "X-API-Key": key, "Content-Type": "application/json" }, { body });
        expect(res.status, res.text).toBe(400);
        expect(res.body.message).toContain(`${field}: unknown field`);
        expect(await snapshot(table)).toBe(before);
      },
    );
  });
});

describe("function-level authorization fails closed", () => {
  it("when a route declares no callers, then the app refuses to start", () => {
    const open = defineRoute({
      method: "GET",
      path: "/open",
      summary: "s",
      description: "d",
      callers: [],
      response: z.unknown(),
      handler: () => Promise.resolve({}),
    });
    expect(() => createApp({ config: t.config, db: t.database.db, logger: createLogger("silent"), routes: [...apiRoutes, open] })).toThrow(
      "Route GET /open declares no callers: every route must name the groups allowed to call it",
    );
  });
});

describe("response headers", () => {
  it("when the API answers (success, any failure, unknown route), then the security headers are there and X-Powered-By is not", async () => {
    const api = () => request(t.url);
    const responses = [
      await api().get("/api/player/get-all-players").set("X-API-Key", key),
      await api().get("/api/player/get-all-players").query({ x: "1" }).set("X-API-Key", key),
      await api().get("/api/player/get-all-players"),
      await api()
        .get("/api/parkour/get-all-maps")
        .set("X-API-Key", await t.key("user-D")),
      await api().get("/api/no/such/route"),
      await api().delete("/api/inscription").set("X-API-Key", key),
      await api().post("/api/inscription").set({ "X-API-Key": key, "Content-Type": "application/json" }).send("{"),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 401, 403, 404, 405, 400]);
    for (const res of responses) {
      expect(res.headers, String(res.status)).toMatchObject(EXPECTED_SECURITY_HEADERS);
      expect(res.headers["x-powered-by"]).toBeUndefined();
    }
  });
});

describe("conditional requests", () => {
  it("when If-None-Match: * reaches a route without an ETag, then the full answer, not an undocumented 304 (found by the fuzz below)", async () => {
    const route = apiRoutes.find((r) => r.path === "/player/get-player-by-nick")!;
    const res = await call(route, { "X-API-Key": key, "If-None-Match": "*" });
    expect(res.status).toBe(200);
    expect(res.body.pseudo).toBe(player.pseudo);
  });
});

describe("headers fuzz", () => {
  const keyShaped = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((s) => `gsk_${s}`);
  /** Any header value Node will send: visible ASCII, tab, space and Latin-1, no CR/LF/NUL. */
  const headerText = fc.string({
    unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)).map((c) => String.fromCharCode(c)),
    maxLength: 200,
  });
  const value = (...specials: string[]) => fc.option(fc.oneof(headerText, keyShaped, fc.constantFrom(...specials, "", " ", "*")), { nil: undefined });
  /** Mostly absent or the valid key, so that most requests get past the key check to the rest of the chain. */
  const rare = (arbitrary: fc.Arbitrary<string | undefined>, usual: string | undefined) =>
    fc.oneof({ weight: 3, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary });

  const headers = fc.record({
    "X-API-Key": rare(value("valid-pinned", "valid"), "valid"),
    Authorization: rare(value("Bearer valid", "Bearer", "Basic dXNlcjpwYXNz", "bearer  valid"), undefined),
    "Content-Type": rare(
      value(
        "application/json",
        "application/json; charset=utf-8",
        "application/json; charset=latin1",
        "text/plain",
        "application/json;;;",
        "multipart/form-data; boundary=x",
      ),
      "application/json",
    ),
    "Content-Encoding": rare(value("gzip", "deflate", "br", "identity", "gzip, gzip", "compress"), undefined),
    Accept: value("application/xml", "text/html", "*/*;q=0"),
    "If-None-Match": value('"x"', 'W/"x"', '"cosmetics-v1-1"'),
    "If-Match": rare(value(`"cosmetic-1-v1"`, 'W/"a"', '"a", "b"', '"unterminated'), undefined),
    "X-Request-Id": value("ok-id", "gsk_abc", "a".repeat(129)),
    "X-Forwarded-For": value("203.0.113.1", "::ffff:127.0.0.1", "127.0.0.1, 10.0.0.1", "unknown", "300.1.1.1"),
    "Idempotency-Key": value("abc", "a".repeat(300)),
  });

  let pinnedKey: string;
  beforeAll(async () => {
    pinnedKey = await t.key("pinned");
    await t.users.setAllowedAddresses("pinned", (await import("../src/auth/address-allow-list.js")).AddressAllowList.parse("203.0.113.0/24").list!);
  });

  it.each(apiRoutes.map((r) => [routeName(r), r] as const))(
    "%s: when any header holds any value, then never a 5xx, errors are {code, message}, and no key-shaped value comes back",
    async (_name, route) => {
      const keyShapedSent = new Set<string>();
      const statuses = new Set<number>();
      await fc.assert(
        fc.asyncProperty(headers, async (drawn) => {
          const sent: Record<string, string> = {};
          for (const [name, v] of Object.entries(drawn)) {
            if (v === undefined) continue;
            sent[name] = v.replace("valid-pinned", pinnedKey).replace("valid", key);
            if (/gsk_[A-Za-z0-9_-]{43}/.test(v)) keyShapedSent.add(v);
          }
          const input = valid[route.path] ?? {};
          // superagent serialises an object only as JSON: with a drawn Content-Type the body goes as text.
          const body = input.body !== undefined && sent["Content-Type"] !== undefined ? JSON.stringify(input.body) : input.body;
          const res = await call(route, sent, { ...input, body });
          const what = `${JSON.stringify(drawn)} → ${res.status} ${res.text}`;
          statuses.add(res.status);
          expect(res.status, what).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.headers["content-type"], what).toBe("application/json; charset=utf-8");
            expect(Object.keys(res.body as object).sort(), what).toEqual(["code", "message"]);
            expect(res.body.code, what).toBe(res.status);
            for (const k of keyShapedSent) expect(res.text, what).not.toContain(k.slice(4));
          }
          for (const k of [...keyShapedSent, key, pinnedKey]) expect(String(res.headers["x-request-id"])).not.toContain(k.slice(4));
        }),
        { numRuns: RUNS * 2 },
      );
      const logs = t.logs.raw.join("\n");
      for (const k of [...keyShapedSent, key, pinnedKey]) expect(logs).not.toContain(k.slice(4));
      // The draw reached past the key check: some answers are successes or failures of the route itself.
      expect(
        [...statuses].some((s) => s !== 401),
        [...statuses].join(),
      ).toBe(true);
    },
  );
});
