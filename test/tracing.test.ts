import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statementOf } from "../src/db/traced-adapter.js";
import { attribute, type Served, serveTraced, startCollector } from "./helpers/otlp.js";
import { freePort } from "./helpers/process.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";
import { redisTestUrl } from "./helpers/redis.js";
import { openStream } from "./helpers/sse.js";

/**
 * Traces (issue 53) as an operator meets them: the service started with the standard OTEL_* variables, a
 * collector that speaks OTLP/HTTP (JSON) on 127.0.0.1, a webhook receiver. One request carrying a
 * `traceparent` is one trace: its server span, the key check, its SQL, the webhook delivery, and the
 * receiver gets the same trace id.
 */
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

/** A server of its own (embedded, or a fresh PostgreSQL database), with `env`, stopped after the file. */
async function serve(env: Record<string, string>): Promise<Served> {
  const served = await serveTraced(env);
  drops.push(served.close);
  return served;
}

describe("tracing with an OTLP collector", () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let receiver: Receiver;
  let server: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    collector = await startCollector();
    receiver = await startReceiver();
    server = await serve({ ...FAST_WEBHOOKS, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SERVICE_NAME: "community-test" });
  }, 120_000);
  afterAll(async () => {
    await server?.service.stop();
    await receiver?.close();
    await collector?.close();
  });

  it("when a write comes with a traceparent, then its spans, its SQL and its webhook delivery are one trace, which the receiver gets", async () => {
    const added = await request(server.url)
      .post("/api/admin/webhooks/add")
      .set("X-API-Key", server.key)
      .send({ url: receiver.url, events: ["api_user.created"] });
    expect(added.status).toBe(201);
    const stream = await openStream(server.url, server.key, "types=api_user.created");
    expect(stream.status).toBe(200);
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const name = `traced_${randomBytes(3).toString("hex")}`;
    const res = await request(server.url)
      .post("/api/inscription")
      .set("X-API-Key", server.key)
      .set("traceparent", `00-${traceId}-${callerSpan}-01`)
      .send({ username: name });
    expect(res.status).toBe(201);
    const newKey = (res.body as { apiKey: string }).apiKey;

    await receiver.waitFor("the delivery", () => receiver.received.some((r) => r.body.includes(name)));
    const delivery = receiver.received.find((r) => r.body.includes(name))!;
    const [, sentTrace, sentSpan] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(delivery.headers.traceparent))!;
    expect(sentTrace).toBe(traceId);
    await server.service.waitFor("the delivery's span", () => collector.spans.some((s) => s.spanId === sentSpan));

    const trace = collector.spans.filter((s) => s.traceId === traceId);
    const named = (n: string) => trace.find((s) => s.name === n);
    const root = named("POST /api/inscription");
    expect(root?.parentSpanId).toBe(callerSpan);
    expect([attribute(root, "http.route"), attribute(root, "http.response.status_code"), attribute(root, "app.caller.groups")]).toEqual([
      "/api/inscription",
      201,
      "A",
    ]);
    expect(named("authenticate")?.parentSpanId).toBe(root!.spanId);
    const insert = named("INSERT api_users");
    expect([insert?.parentSpanId !== undefined, attribute(insert, "db.operation.name"), attribute(insert, "db.collection.name")]).toEqual([
      true,
      "INSERT",
      "api_users",
    ]);
    const deliver = trace.find((s) => s.spanId === sentSpan)!;
    expect([
      deliver.name,
      attribute(deliver, "webhook.endpoint.id"),
      attribute(deliver, "http.response.status_code"),
      attribute(deliver, "webhook.outcome"),
    ]).toEqual(["webhook.deliver", (added.body as { endpoint: { id: number } }).endpoint.id, 204, "delivered"]);
    // Never a key, nor a query's values: the new user's name is only in its own answer and the webhook.
    const exported = collector.bodies.join("\n");
    for (const secret of [server.key, newKey, name, (added.body as { secret: string }).secret]) expect(exported).not.toContain(secret);
    expect(exported).not.toContain("db.query.text");
    // The event stream's frame names the write's trace.
    await stream.waitFor("the event", () => stream.events.some((e) => e.data.includes(name)));
    expect(stream.events.find((e) => e.data.includes(name))!.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    await stream.close();
    // Handing it to the streams was a span of its own, linked to the write's trace.
    await server.service.waitFor("the fan-out's span", () =>
      collector.spans.some((s) => s.name === "events.fan_out" && s.links?.some((l) => l.traceId === traceId)),
    );
    const fanOut = collector.spans.find((s) => s.name === "events.fan_out" && s.links?.some((l) => l.traceId === traceId))!;
    expect([fanOut.traceId === traceId, attribute(fanOut, "events.streams"), (attribute(fanOut, "events.count") as number) >= 1]).toEqual([false, 1, true]);
    // The request's log line names its trace and span.
    const requestLine = () => server.service.lines().find((l) => l.msg === "request" && l.path === "/api/inscription");
    await server.service.waitFor("the request's log line", () => requestLine() !== undefined);
    const line = requestLine();
    expect([line?.trace_id, line?.span_id]).toEqual([traceId, root!.spanId]);
  }, 60_000);

  it("when the caller's trace is not sampled, then none of its spans is exported, and the receiver is told it is not (flags 00)", async () => {
    const traceId = randomBytes(16).toString("hex");
    const name = `unsampled_${randomBytes(3).toString("hex")}`;
    const res = await request(server.url)
      .post("/api/inscription")
      .set("X-API-Key", server.key)
      .set("traceparent", `00-${traceId}-${randomBytes(8).toString("hex")}-00`)
      .send({ username: name });
    expect(res.status).toBe(201);
    await receiver.waitFor("the delivery", () => receiver.received.some((r) => r.body.includes(name)));
    expect(String(receiver.received.find((r) => r.body.includes(name))!.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    // A later, sampled request's spans are exported: by then the unsampled one's would have been too.
    const marker = randomBytes(16).toString("hex");
    await request(server.url)
      .get("/livez")
      .set("traceparent", `00-${marker}-${randomBytes(8).toString("hex")}-01`);
    await server.service.waitFor("a later span", () => collector.spans.some((s) => s.traceId === marker));
    expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  }, 60_000);

  it("when the traceparent is malformed, then the request starts a trace of its own; a failure's span says so", async () => {
    const res = await request(server.url).get("/api/player/get-all-players").set("X-API-Key", server.key).set("traceparent", "00-nothex-zz-01");
    expect(res.status).toBe(200);
    const unknown = await request(server.url)
      .get("/api/player/get-all-players")
      .set("X-API-Key", "gsk_" + "0".repeat(43));
    expect(unknown.status).toBe(401);
    await server.service.waitFor("their spans", () => collector.spans.filter((s) => s.name === "GET /api/player/get-all-players").length >= 2);
    const [ok, refused] = collector.spans.filter((s) => s.name === "GET /api/player/get-all-players");
    expect(ok!.parentSpanId ?? "").toBe("");
    expect(ok!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect([attribute(refused, "http.response.status_code"), attribute(refused, "app.caller.groups")]).toEqual([401, undefined]);
  }, 60_000);
});

describe.runIf(redisTestUrl !== undefined)("tracing with Redis counting the rate limits", () => {
  it("when a request takes a rate-limit lease from Redis, then the command is a span of its trace, named by the command alone", async () => {
    const collector = await startCollector();
    try {
      const { url, key } = await serve({
        REDIS_URL: redisTestUrl!,
        RATE_LIMIT_PER_MINUTE: "600",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: "50",
      });
      const traceId = randomBytes(16).toString("hex");
      const res = await request(url)
        .get("/api/parkour/get-all-maps")
        .set("X-API-Key", key)
        .set("traceparent", `00-${traceId}-${randomBytes(8).toString("hex")}-01`);
      expect(res.status).toBe(200);
      const redis = () => collector.spans.filter((s) => s.traceId === traceId && s.name.startsWith("redis "));
      await new Promise<void>((resolve, reject) => {
        const until = Date.now() + 30_000;
        const look = () => (redis().length > 0 ? resolve() : Date.now() > until ? reject(new Error("no Redis span")) : setTimeout(look, 25));
        look();
      });
      expect(redis().map((s) => [attribute(s, "db.system.name"), attribute(s, "db.operation.name")])).toContainEqual([
        "redis",
        expect.stringMatching(/^[A-Z]+$/),
      ]);
      expect(collector.bodies.join("\n")).not.toContain(key);
    } finally {
      await collector.close();
    }
  }, 60_000);
});

describe("tracing with a collector that is not there", () => {
  it("when the exporter cannot connect, then requests are answered as before, the lost spans are counted, and it is said once", async () => {
    const metricsPort = await freePort();
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const { service, url, key } = await serve({
      OTEL_EXPORTER_OTLP_ENDPOINT: nowhere,
      OTEL_BSP_SCHEDULE_DELAY: "20",
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: "127.0.0.1",
    });
    for (let i = 0; i < 20; i++) expect((await request(url).get("/api/player/get-all-players").set("X-API-Key", key)).status).toBe(200);
    const dropped = async () => {
      const text = (await request(`http://127.0.0.1:${metricsPort}`).get("/metrics")).text;
      return Number(/^tracing_spans_dropped_total\{reason="export_failed"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    let lost = 0;
    for (const until = Date.now() + 30_000; lost === 0 && Date.now() < until; ) {
      lost = await dropped();
      if (lost === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lost).toBeGreaterThan(0);
    const warnings = () => service.lines().filter((l) => typeof l.msg === "string" && l.msg.startsWith("tracing: spans could not be exported"));
    await service.waitFor("the exporter's warning", () => warnings().length > 0);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.err).toMatchObject({ message: expect.stringContaining("ECONNREFUSED") });
    expect((await request(url).get("/api/player/get-all-players").set("X-API-Key", key)).status).toBe(200);
  }, 60_000);
});

describe("tracing with a collector that takes the connection and never answers", () => {
  it("when the queue is full, then requests are answered as before and the spans that did not fit are counted", async () => {
    const held = new Set<Socket>();
    const silent = createServer(() => undefined).on("connection", (socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const metricsPort = await freePort();
    try {
      const { url, key } = await serve({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        ...{ OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_BSP_MAX_QUEUE_SIZE: "8", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "8", OTEL_BSP_EXPORT_TIMEOUT: "600000" },
        ...{ METRICS_PORT: String(metricsPort), METRICS_HOST: "127.0.0.1" },
      });
      // The first batch's export hangs; the next spans fill the queue, and the rest are dropped, not waited for.
      for (let i = 0; i < 20; i++) expect((await request(url).get("/api/player/get-all-players").set("X-API-Key", key)).status).toBe(200);
      const text = (await request(`http://127.0.0.1:${metricsPort}`).get("/metrics")).text;
      expect(Number(/^tracing_spans_dropped_total\{reason="queue_full"\} (\d+)/m.exec(text)?.[1])).toBeGreaterThan(0);
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 60_000);
});

describe("the name of an SQL statement's span", () => {
  it.each([
    ['SELECT "public"."players"."id" FROM "public"."players" WHERE "pseudo" = $1', "SELECT", "players"],
    ["WITH w AS (INSERT INTO reward_logs (a) VALUES ($1) RETURNING *), webhook_e AS (INSERT INTO webhook_events …) SELECT 1", "INSERT", "reward_logs"],
    ['INSERT INTO "cosmetics" (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET price = EXCLUDED.price', "INSERT", "cosmetics"],
    ["SELECT id FROM webhook_deliveries WHERE status = 'pending' FOR UPDATE SKIP LOCKED", "SELECT", "webhook_deliveries"],
    ["SELECT 1 FROM players WHERE id = $1 FOR NO KEY UPDATE", "SELECT", "players"],
    ['UPDATE "worlds" SET tag = $1 WHERE id = $2', "UPDATE", "worlds"],
    ['DELETE FROM idempotency_keys WHERE "createdAt" < $1', "DELETE", "idempotency_keys"],
    ["BEGIN", "BEGIN", undefined],
  ])("when the statement is %s, then the span is its kind and first table", (sql, kind, table) => {
    expect(statementOf(sql)).toEqual({ kind, table });
  });
});
