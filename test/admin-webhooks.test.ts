import { Webhook } from "standardwebhooks";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { DeliveryWorker } from "../src/webhooks/worker.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * The admin routes managing webhooks (/api/admin/webhooks…), against a real
 * delivery worker and a real receiver on 127.0.0.1 (WEBHOOKS_ALLOW_PRIVATE=true
 * here; a second app without it refuses private targets).
 */

let t: TestApp;
let key: string;
let receiver: Receiver | undefined;
let worker: DeliveryWorker | undefined;

beforeAll(async () => {
  t = await startTestApp({ env: FAST_WEBHOOKS });
  key = await t.key("user-A");
});
afterAll(() => t.close());
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await receiver?.close();
  receiver = undefined;
  await t.database.db.prisma.webhookEndpoint.deleteMany();
});

const get = (path: string, query: Record<string, string> = {}, as = key) => request(t.url).get(`/api${path}`).query(query).set("X-API-Key", as);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(t.url)
    .post(`/api${path}`)
    .set({ "X-API-Key": key, ...headers })
    .send(body as object);

function startWorker() {
  worker = new DeliveryWorker(t.database.db, loadConfig({ NODE_ENV: "test", ...FAST_WEBHOOKS }), createLogger("silent"));
  void worker.start();
}

const formBody = (playerId: number) => ({ playerId, video: "v", question1: "a", question2: "b", question3: "c", question4: "d", question5: "e" });

describe("admin webhook routes", () => {
  it("when an admin adds an endpoint, then its secret is shown once, signs what arrives, and never appears again", async () => {
    receiver = await startReceiver();
    const added = await post("/admin/webhooks/add", { url: receiver.url, events: ["form.created"] }).expect(201);
    const { endpoint, secret } = added.body as { endpoint: { id: number }; secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(added.body.endpoint).toEqual({
      id: endpoint.id,
      url: receiver.url,
      events: ["form.created"],
      createdAt: expect.any(String),
      pending: 0,
      delivered: 0,
      failed: 0,
    });
    const list = await get("/admin/webhooks").expect(200);
    expect(list.body.endpoints).toEqual([added.body.endpoint]);
    expect(list.text).not.toContain(secret);

    startWorker();
    const player = await makePlayer(t.database.db.prisma);
    await post("/form/create-form", formBody(player.id)).expect(201);
    await receiver.waitFor("the form", () => receiver!.delivered().size === 1);
    const [sent] = receiver.received;
    expect((new Webhook(secret).verify(sent!.body, sent!.headers as Record<string, string>) as { type: string }).type).toBe("form.created");

    const deliveries = await get("/admin/webhooks/deliveries", { endpointId: String(endpoint.id) }).expect(200);
    expect(deliveries.body).toEqual({
      deliveries: [
        expect.objectContaining({
          endpointId: endpoint.id,
          type: "form.created",
          status: "delivered",
          attempts: 1,
          lastStatus: 204,
          webhookId: sent!.headers["webhook-id"],
        }),
      ],
      nextCursor: null,
    });
    expect((await get("/admin/webhooks").expect(200)).body.endpoints[0]).toMatchObject({ delivered: 1, pending: 0 });
    const logs = t.logs.raw.join("\n");
    expect(logs).not.toContain(secret.slice(6));
  });

  it("when an add is resent with its Idempotency-Key, then 409 and no second endpoint, and the secret is not in the answer", async () => {
    const headers = { "Idempotency-Key": "add-once-1" };
    const first = await post("/admin/webhooks/add", { url: "https://203.0.113.10/hook" }, headers).expect(201);
    const again = await post("/admin/webhooks/add", { url: "https://203.0.113.10/hook" }, headers).expect(409);
    expect(again.body.message).toContain(`Webhook ${first.body.endpoint.id} was added by an earlier request`);
    expect(again.text).not.toContain(first.body.secret);
    expect((await get("/admin/webhooks")).body.endpoints).toHaveLength(1);
    const stored = await t.database.db.prisma.idempotencyKey.findMany();
    expect(JSON.stringify(stored, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(first.body.secret);
  });

  it("when a delivered delivery is redelivered, then it arrives again with the same webhook-id; a pending one is 409", async () => {
    receiver = await startReceiver();
    const { endpoint } = (await post("/admin/webhooks/add", { url: receiver.url }).expect(201)).body as { endpoint: { id: number } };
    const player = await makePlayer(t.database.db.prisma);
    await post("/website/create-reward-log", { playerId: player.id, rewardId: 5 }).expect(201);
    const [pending] = (await get("/admin/webhooks/deliveries").expect(200)).body.deliveries as { id: string; status: string }[];
    expect(pending).toMatchObject({ endpointId: endpoint.id, status: "pending", attempts: 0 });
    const conflict = await post("/admin/webhooks/redeliver", { deliveryId: pending!.id }).expect(409);
    expect(conflict.body.message).toBe(`Webhook delivery ${pending!.id} is still pending: it is being retried already`);

    startWorker();
    await receiver.waitFor("the reward", () => receiver!.delivered().size === 1);
    await waitForStatus(pending!.id, "delivered");
    const again = await post("/admin/webhooks/redeliver", { deliveryId: pending!.id }).expect(200);
    expect(again.body).toMatchObject({ id: pending!.id, status: "pending" });
    await receiver.waitFor("the redelivery", () => receiver!.received.length === 2);
    const [a, b] = receiver.received;
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]);
    expect(b!.body).toBe(a!.body);
    await waitForStatus(pending!.id, "delivered");
  });

  it("when deliveries are listed page by page, then every one comes once, newest first, following Link rel=next", async () => {
    const { endpoint } = (await post("/admin/webhooks/add", { url: "https://203.0.113.10/hook", events: ["reward_log.created"] }).expect(201)).body as {
      endpoint: { id: number };
    };
    const other = (await post("/admin/webhooks/add", { url: "https://203.0.113.11/hook" }).expect(201)).body.endpoint as { id: number };
    const player = await makePlayer(t.database.db.prisma);
    for (let i = 0; i < 5; i++) await post("/website/create-reward-log", { playerId: player.id, rewardId: i + 1 }).expect(201);
    const seen: string[] = [];
    let query: Record<string, string> = { endpointId: String(endpoint.id), limit: "2" };
    for (let page = 0; page < 5; page++) {
      const res = await get("/admin/webhooks/deliveries", query).expect(200);
      seen.push(...(res.body.deliveries as { id: string; endpointId: number }[]).map((d) => (expect(d.endpointId).toBe(endpoint.id), d.id)));
      if (res.body.nextCursor === null) {
        expect(res.headers.link).toBeUndefined();
        break;
      }
      const link = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link));
      expect(link, String(res.headers.link)).not.toBeNull();
      // Relative to the URL asked, as every paged route writes it.
      const next = new URL(link![1]!, `${t.url}/api/admin/webhooks/deliveries`);
      expect(link![1]).toMatch(/^deliveries\?/);
      expect(next.pathname).toBe("/api/admin/webhooks/deliveries");
      expect(next.searchParams.get("cursor")).toBe(res.body.nextCursor);
      query = Object.fromEntries(next.searchParams);
    }
    expect(seen).toHaveLength(5);
    expect([...seen].sort((x, y) => Number(y) - Number(x))).toEqual(seen);
    // Both endpoints' deliveries when none is named: 5 rewards to each.
    expect((await get("/admin/webhooks/deliveries", { limit: "500" })).body.deliveries).toHaveLength(10);
    expect((await get("/admin/webhooks/deliveries", { endpointId: String(other.id) })).body.deliveries).toHaveLength(5);
  });

  it("when an endpoint is removed, then it is gone with its deliveries, and a second removal is 404", async () => {
    const { endpoint } = (await post("/admin/webhooks/add", { url: "https://203.0.113.10/hook" }).expect(201)).body as { endpoint: { id: number } };
    const player = await makePlayer(t.database.db.prisma);
    await post("/website/create-reward-log", { playerId: player.id, rewardId: 1 }).expect(201);
    const removed = await post("/admin/webhooks/remove", { endpointId: endpoint.id }).expect(200);
    expect(removed.body).toEqual({ id: endpoint.id, url: "https://203.0.113.10/hook" });
    expect((await get("/admin/webhooks")).body.endpoints).toEqual([]);
    expect(await t.database.db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
    const again = await post("/admin/webhooks/remove", { endpointId: endpoint.id }).expect(404);
    expect(again.body).toEqual({ code: 404, message: `Webhook ${endpoint.id} not found` });
  });

  it("when a client sends what cannot be, then a 4xx names the field, and nothing is stored", async () => {
    const cases: [unknown, number, string][] = [
      [{ url: "ftp://example.com/x" }, 400, "url: expected http:// or https://, not ftp://"],
      [{ url: "not a url" }, 400, "url: not a URL (expected http:// or https://, a host, then any path)"],
      // What cannot be parsed is not echoed: it may hold a credential.
      [{ url: "http://bob:pw@exa mple.com/?t=abc" }, 400, "url: not a URL (expected http:// or https://, a host, then any path)"],
      [{ url: "https://203.0.113.10/x#frag" }, 400, "url: a fragment"],
      [{ url: "" }, 400, "url"],
      [{ url: 42 }, 400, "url"],
      [{ url: `https://203.0.113.10/${"a".repeat(2048)}` }, 400, "url"],
      [{ url: "https://203.0.113.10/x", events: ["player.deleted"] }, 400, "events: unknown player.deleted"],
      // The misspelt event is named before the refused (loopback) URL.
      [{ url: "http://127.0.0.1:9/x", events: ["reward.created"] }, 400, "events: unknown reward.created; known: reward_log.created, "],
      [{ url: "https://203.0.113.10/x", events: "form.created" }, 400, "events"],
      [{ url: "https://203.0.113.10/x", secret: "whsec_mine" }, 400, "secret: unknown field"],
      [{}, 400, "url"],
    ];
    for (const [body, status, message] of cases) {
      const res = await post("/admin/webhooks/add", body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.message, JSON.stringify(body)).toContain(message);
    }
    for (const [path, body, status, message] of [
      ["/admin/webhooks/remove", { endpointId: "1" }, 400, "endpointId"],
      ["/admin/webhooks/remove", { endpointId: 0 }, 400, "endpointId"],
      ["/admin/webhooks/remove", {}, 400, "endpointId"],
      ["/admin/webhooks/redeliver", { deliveryId: 5 }, 400, "deliveryId"],
      ["/admin/webhooks/redeliver", { deliveryId: "1e3" }, 400, "deliveryId"],
      ["/admin/webhooks/redeliver", { deliveryId: "99999999999999999" }, 404, "Webhook delivery 99999999999999999 not found"],
    ] as const) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.message).toContain(message);
    }
    for (const [query, status, message] of [
      [{ endpointId: "424242" }, 404, "Webhook 424242 not found"],
      [{ endpointId: "x" }, 400, "endpointId"],
      [{ limit: "0" }, 400, "limit"],
      [{ limit: "501" }, 400, "limit"],
      [{ cursor: "nonsense!" }, 400, "cursor: not a cursor this API gave"],
      [{ cursor: "1".repeat(65) }, 400, "cursor: not a cursor this API gave"],
      [{ other: "1" }, 400, "other"],
    ] as const) {
      const res = await get("/admin/webhooks/deliveries", query);
      expect(res.status, JSON.stringify(query)).toBe(status);
      expect(res.body.message).toContain(message);
    }
    expect(await t.database.db.prisma.webhookEndpoint.count()).toBe(0);
  });

  it("when the service does not allow private targets, then loopback, private and link-local URLs are refused with 400", async () => {
    const strict = await startTestApp({ env: { WEBHOOKS_ALLOW_PRIVATE: "false" } });
    try {
      const as = await strict.key("user-B");
      for (const url of ["http://127.0.0.1:8080/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://[::1]/x", "http://localhost/x"]) {
        const res = await request(strict.url).post("/api/admin/webhooks/add").set("X-API-Key", as).send({ url });
        expect(res.status, url).toBe(400);
        expect(res.body.message, url).toMatch(
          /^url: .*private, loopback or link-local address, allowed when the server runs with WEBHOOKS_ALLOW_PRIVATE=true \(in \.env, then restart it\)$/,
        );
      }
      expect(await strict.database.db.prisma.webhookEndpoint.count()).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it("when a key of group C or D calls a webhook route, then 403", async () => {
    for (const user of ["user-C", "user-D"]) {
      const as = await t.key(user);
      expect((await get("/admin/webhooks", {}, as)).status).toBe(403);
      const res = await request(t.url).post("/api/admin/webhooks/add").set("X-API-Key", as).send({ url: "https://203.0.113.10/x" });
      expect(res.status).toBe(403);
    }
    expect(await t.database.db.prisma.webhookEndpoint.count()).toBe(0);
  });
});

async function waitForStatus(id: string, status: string) {
  const until = Date.now() + 20_000;
  for (;;) {
    const [row] = await t.database.db.prisma.$queryRaw<{ status: string }[]>`SELECT status FROM webhook_deliveries WHERE id = ${BigInt(id)}`;
    if (row?.status === status) return;
    if (Date.now() > until) throw new Error(`delivery ${id} not ${status}: ${row?.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("an endpoint whose stored URL is not one (a restored or hand-edited row)", () => {
  it("when an admin lists the endpoints, then it is shown as not valid, never a 500; its deliveries fail at their first attempt, not retried", async () => {
    const endpoint = await t.database.db.prisma.webhookEndpoint.create({
      data: { url: "not a url at all", events: [], secret: "plain:whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    });
    const listed = await get("/admin/webhooks").expect(200);
    expect((listed.body as { endpoints: { id: number; url: string }[] }).endpoints.find((e) => e.id === endpoint.id)?.url).toBe("(not a valid URL)");
    const player = await makePlayer(t.database.db.prisma);
    await post("/form/create-form", formBody(player.id)).expect(201);
    startWorker();
    const until = Date.now() + 30_000;
    let delivery = await t.database.db.prisma.webhookDelivery.findFirst({ where: { endpointId: endpoint.id } });
    while (delivery?.status !== "failed" && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      delivery = await t.database.db.prisma.webhookDelivery.findFirst({ where: { endpointId: endpoint.id } });
    }
    expect(delivery).toMatchObject({ status: "failed", attempts: 1, lastResponse: "refused: the endpoint's URL is not an http(s) URL" });
  });
});
