import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, ApiError, createApiClient, EtagPoller, ListSync, orThrow, walkPages } from "../clients/typescript/src/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { document } from "./helpers/contract.js";
import { makeCosmetic, makePlayer, unique } from "./helpers/fixtures.js";

let t: TestApp;
let key: string;
let api: ApiClient;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
  api = createApiClient({ baseUrl: `${t.url}/api`, apiKey: key });
});
afterAll(() => t.close());

describe("the TypeScript client against the service", () => {
  it("when released, then its version is the API's", () => {
    const pkg = JSON.parse(readFileSync("clients/typescript/package.json", "utf8")) as { version: string };
    expect(pkg.version).toBe((document as unknown as { info: { version: string } }).info.version);
  });

  it("when it calls the API, then it gets typed data, and a failure as {code, message} or, with orThrow, as an ApiError", async () => {
    const name = unique("Client run ");
    await t.database.db.prisma.parkourMap.create({ data: { name, difficulty: "easy" } });
    const maps = orThrow(await api.GET("/parkour/get-all-maps"));
    expect(maps.map((m) => m.name)).toContain(name);

    const missing = await api.GET("/cosmetic/get-cosmetic", { params: { query: { id: 999_999 } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ code: 404, message: "Cosmetic not found" });
    const thrown = (() => {
      try {
        orThrow(missing);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({
      status: 404,
      message: "Cosmetic not found",
      requestId: missing.response.headers.get("X-Request-Id"),
      error: "NOT_FOUND",
    });
  });

  it("when an EtagPoller polls an unchanged cosmetic, then it gets a 304 (no data); after a change, the new cosmetic", async () => {
    const cosmetic = await makeCosmetic(t.database.db.prisma);
    const poller = new EtagPoller(api, "/cosmetic/get-cosmetic", { id: cosmetic.id });
    const first = await poller.poll();
    expect(first).toMatchObject({ changed: true, data: { id: cosmetic.id, price: 250 } });
    expect(await poller.poll()).toEqual({ changed: false, etag: first.etag });

    orThrow(await api.PATCH("/cosmetic/update-cosmetic", { body: { id: cosmetic.id, price: 300 }, params: { header: { "If-Match": first.etag } } }));
    const third = await poller.poll();
    expect(third).toMatchObject({ changed: true, data: { price: 300 } });
    expect(third.etag).not.toBe(first.etag);
  });

  it("when walkPages walks a list, then its pages hold the whole list in order, each at most limit rows, with one Sync-Token", async () => {
    const prisma = t.database.db.prisma;
    for (let i = 0; i < 5; i++) await makePlayer(prisma, { gradeId: 77 });
    const pages = [];
    for await (const page of walkPages(api, "/player/get-all-full-players-by-gradeId", { query: { gradeId: 77 }, limit: 2 })) pages.push(page);
    expect(pages.map((p) => p.rows.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((p) => p.rows)).toEqual(orThrow(await api.GET("/player/get-all-full-players-by-gradeId", { params: { query: { gradeId: 77 } } })));
    expect(new Set(pages.map((p) => p.syncToken)).size).toBe(1);
  });

  it("when a ListSync syncs, then first the whole list, then only what changed, its cache equal to the list; after a deletion (410), the whole list again", async () => {
    const prisma = t.database.db.prisma;
    for (let i = 0; i < 3; i++) await prisma.parkourMap.create({ data: { name: unique("Synced ") } });
    const maps = new ListSync(api, "/parkour/get-all-maps", { key: (m) => m.id, limit: 2 });
    const first = await maps.sync();
    expect(first.full).toBe(true);
    const changed = await prisma.parkourMap.update({ where: { id: first.changed[0]!.id }, data: { difficulty: "insane" } });
    const second = await maps.sync();
    expect(second.full).toBe(false);
    expect(second.changed.map((m) => m.id)).toContain(changed.id);
    const whole = orThrow(await api.GET("/parkour/get-all-maps"));
    expect([...maps.rows.values()].sort((a, b) => a.id - b.id)).toEqual(whole);

    await prisma.parkourMap.delete({ where: { id: changed.id } });
    const third = await maps.sync();
    expect(third.full).toBe(true);
    expect(maps.rows.has(changed.id)).toBe(false);
  });

  it("when a ListSync of a filtered list is given keep, then a row that left the filter leaves the cache", async () => {
    const prisma = t.database.db.prisma;
    const leaving = await makePlayer(prisma, { gradeId: 78 });
    await makePlayer(prisma, { gradeId: 78 });
    const graded = new ListSync(api, "/player/get-all-full-players-by-gradeId", { key: (p) => p.id, query: { gradeId: 78 }, keep: (p) => p.gradeId === 78 });
    await graded.sync();
    expect(graded.rows.size).toBe(2);
    await prisma.player.update({ where: { id: leaving.id }, data: { gradeId: 79 } });
    await graded.sync();
    expect([...graded.rows.keys()]).not.toContain(leaving.id);
    expect(graded.rows.size).toBe(1);
  });

  it("when a POST is sent, then it carries an Idempotency-Key of its own; resent with the caller's key, it is answered with the first answer", async () => {
    const sent: Request[] = [];
    const spying = createApiClient({
      baseUrl: `${t.url}/api`,
      apiKey: key,
      fetch: (request) => {
        sent.push(request.clone());
        return fetch(request);
      },
    });
    orThrow(await spying.POST("/inscription", { body: { username: unique("client-") } }));
    expect(sent[0]!.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);

    const username = unique("client-");
    const header = { "Idempotency-Key": unique("order-") };
    const first = await api.POST("/inscription", { body: { username }, params: { header } });
    const again = await api.POST("/inscription", { body: { username }, params: { header } });
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(409);
    expect(again.response.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("when the API user is over its limit, then the 429 whose Retry-After exceeds the client's patience comes back at once, with Retry-After", async () => {
    const limited = await startTestApp({ database: t.database, env: { RATE_LIMIT_PER_MINUTE: "1" } });
    try {
      const client = createApiClient({ baseUrl: `${limited.url}/api`, apiKey: key, maxRetryDelayMs: 500 });
      orThrow(await client.GET("/parkour/get-all-maps"));
      // A client that waited out Retry-After instead would be let through by the next window (200), or outlast the test.
      const refused = await client.GET("/parkour/get-all-maps");
      expect(refused.response.status).toBe(429);
      expect(() => orThrow(refused)).toThrow(expect.objectContaining({ status: 429, retryAfterSeconds: expect.any(Number) }));
    } finally {
      await limited.close();
    }
  });
});

/** A stand-in server for the failures the service cannot be made to give on cue: it answers from a script. */
async function scripted(answers: ((res: ServerResponse, req: IncomingMessage) => void)[]) {
  const seen: { method: string; key: string | undefined; traceparent: string | undefined; body: string; at: number }[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({
        method: req.method!,
        key: req.headers["idempotency-key"] as string | undefined,
        traceparent: req.headers.traceparent as string | undefined,
        body,
        at: Date.now(),
      });
      const answer = answers[seen.length - 1] ?? ((r: ServerResponse) => r.writeHead(500).end());
      answer(res, req);
    });
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return { url, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(body));
const drop = (res: ServerResponse) => res.socket!.destroy();
const unavailable = json(503, { code: 503, message: "Database unavailable, retry later" }, { "Retry-After": "1" });

describe("the TypeScript client's retries", () => {
  it("when a POST gets a 503 with Retry-After, then it is resent after that long, with the same Idempotency-Key and body", async () => {
    const s = await scripted([unavailable, json(201, { id: 1, playerId: 1, rewardId: 2, rewardedAt: "2026-01-01T00:00:00Z" })]);
    try {
      const client = createApiClient({ baseUrl: s.url, apiKey: "k" });
      const created = await client.POST("/website/create-reward-log", { body: { playerId: 1, rewardId: 2 } });
      expect(created.response.status).toBe(201);
      expect(s.seen).toHaveLength(2);
      expect(s.seen[1]!.key).toBe(s.seen[0]!.key);
      expect(s.seen[1]!.body).toBe(s.seen[0]!.body);
      expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(950);
    } finally {
      await s.close();
    }
  });

  it("when a call carries the caller's traceparent, then every try sends it as given (the service continues that trace)", async () => {
    const s = await scripted([drop, json(200, [])]);
    try {
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const client = createApiClient({ baseUrl: s.url, apiKey: "k" });
      expect((await client.GET("/parkour/get-all-maps", { headers: { traceparent } })).response.status).toBe(200);
      expect(s.seen.map((r) => r.traceparent)).toEqual([traceparent, traceparent]);
    } finally {
      await s.close();
    }
  });

  it("when a GET's connection is lost, then it is tried again; after the last try, the failure is the caller's", async () => {
    const s = await scripted([drop, json(200, []), drop, drop, drop]);
    try {
      const client = createApiClient({ baseUrl: s.url, apiKey: "k" });
      expect(orThrow(await client.GET("/parkour/get-all-maps"))).toEqual([]);
      await expect(client.GET("/parkour/get-all-maps")).rejects.toThrow();
      expect(s.seen).toHaveLength(5);
    } finally {
      await s.close();
    }
  });

  it("when a PATCH gets a 503, then it is not resent unless the caller allows it", async () => {
    const cosmetic = {
      id: 3,
      name: "Halo",
      type: "hat",
      rarity: "rare",
      game: "lobby",
      argumentFr: "",
      argumentEn: "",
      image: "",
      lootbox: false,
      price: 1,
      description: null,
      collection: null,
      render: null,
      permanent: false,
    };
    const s = await scripted([unavailable, unavailable, json(200, cosmetic)]);
    try {
      const once = createApiClient({ baseUrl: s.url, apiKey: "k" });
      expect((await once.PATCH("/cosmetic/update-cosmetic", { body: { id: 3, price: 1 } })).response.status).toBe(503);
      expect(s.seen).toHaveLength(1);
      const retrying = createApiClient({ baseUrl: s.url, apiKey: "k", retryPatch: true });
      expect((await retrying.PATCH("/cosmetic/update-cosmetic", { body: { id: 3, price: 1 } })).response.status).toBe(200);
      expect(s.seen).toHaveLength(3);
    } finally {
      await s.close();
    }
  });
});
