import { once } from "node:events";
import net from "node:net";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { openDatabase } from "../src/db/database.js";
import { Metrics } from "../src/service/metrics.js";
import { type Service, startService } from "../src/service/server.js";
import { ApiUsers } from "../src/users/users.js";
import { LogCapture, startTestApp, type TestApp } from "./helpers/app.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";

let t: TestApp;
let metrics: Metrics;
let key: string;
beforeAll(async () => {
  const { createTestDatabase } = await import("./helpers/database.js");
  const database = await createTestDatabase();
  metrics = new Metrics(database.db, { processMetrics: false });
  t = await startTestApp({ database, metrics });
  key = await t.key("user-A");
});
afterAll(async () => {
  await t.close();
  await t.database.drop();
});

describe("health probes", () => {
  it("when /livez is asked, without a key, then 200 and never cached", async () => {
    const res = await request(t.url).get("/livez");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("when /readyz is asked and the database answers, then 200 naming the database", async () => {
    const res = await request(t.url).get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ready", database: onPostgres ? "postgres" : "embedded" });
  });

  it("when the database cannot be reached, then /readyz is 503 with the error body (not a wait for it), and /livez stays 200", async () => {
    const dead = openDatabase({ kind: "postgres", url: "postgresql://postgres@127.0.0.1:1/none", poolMax: 1, connectTimeoutMs: 500 });
    const down = await startTestApp({ database: { db: dead, url: undefined, drop: () => dead.close() } });
    try {
      const res = await request(down.url).get("/readyz");
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 503, message: "Database unavailable, retry later" });
      expect((await request(down.url).get("/livez")).status).toBe(200);
    } finally {
      await down.close();
      await dead.close();
    }
  });

  it("when a probe is asked with If-None-Match: *, then the full answer (the probes have no ETag to match)", async () => {
    for (const path of ["/livez", "/readyz", "/api/openapi.json"]) {
      const res = await request(t.url).get(path).set("If-None-Match", "*");
      expect(res.status, path).toBe(200);
    }
  });

  it("when the probes are under /api, then they do not exist there", async () => {
    expect((await request(t.url).get("/api/livez")).status).toBe(404);
  });
});

describe("metrics", () => {
  it("when requests are served, then the histogram counts them by declared route and status, and unknown paths share one label", async () => {
    const player = await makePlayer(t.database.db.prisma);
    await request(t.url).get("/api/player/get-player-by-nick").query({ nick: player.pseudo }).set("X-API-Key", key).expect(200);
    await request(t.url).get("/api/player/get-player-by-nick").query({ nick: player.pseudo }).set("X-API-Key", key).expect(200);
    await request(t.url).get("/api/player/get-player-by-nick").query({ nick: player.pseudo }).expect(401);
    await request(t.url).get(`/no/such/${player.pseudo}`).expect(404);
    const text = (await metrics.text()).body;
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/player/get-player-by-nick",status="200"} 2');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/player/get-player-by-nick",status="401"} 1');
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} \d+$/m);
    // The value a client sent never becomes a label.
    expect(text).not.toContain(player.pseudo);
    if (onPostgres) {
      expect(text).toMatch(/^db_pool_max_connections 20$/m);
      expect(text).toMatch(/^db_pool_connections \d+$/m);
      expect(text).toMatch(/^db_pool_waiting_requests 0$/m);
    }
  });
});

describe("metrics of the rate limits", () => {
  it('when a user goes over its limit, then rate_limit_rejections_total{kind="user"} counts each 429', async () => {
    const limited = new Metrics(undefined, { processMetrics: false });
    const app = await startTestApp({ database: t.database, metrics: limited, env: { RATE_LIMIT_PER_MINUTE: "1" } });
    try {
      const k = await app.key("user-B");
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(app.url).get("/api/player/get-all-players").set("X-API-Key", k)).status);
      expect(statuses).toEqual([200, 429, 429]);
      const text = (await limited.text()).body;
      expect(text).toContain('rate_limit_rejections_total{kind="user"} 2');
      expect(text).toContain('rate_limit_rejections_total{kind="address"} 0');
    } finally {
      await app.close();
    }
  });
});

/** The whole service, as `npm start` runs it: its own listeners, timeouts and shutdown. */
describe.skipIf(!onPostgres)("the service (PostgreSQL)", () => {
  let service: Service;
  let url: string;
  let drop: () => Promise<void>;
  let dbUrl: string;
  const logs = new LogCapture();
  beforeAll(async () => {
    const database = await createServerDatabase();
    drop = () => database.drop();
    dbUrl = database.url;
    const config = loadConfig({
      NODE_ENV: "test",
      DATABASE_URL: database.url,
      HOST: "127.0.0.1",
      PORT: "0",
      METRICS_PORT: "0",
      HEADERS_TIMEOUT_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: "5000",
    });
    service = await startService(config, createLogger("info", logs));
    url = `http://127.0.0.1:${service.port}`;
  });
  afterAll(async () => {
    await service.stop();
    await drop();
  });

  it("when /metrics is asked, then it is served on the metrics port, bound to 127.0.0.1, and not on the API's", async () => {
    await request(url).get("/livez").expect(200);
    const res = await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/livez",status="200"}');
    expect(text).toContain("process_resident_memory_bytes");
    expect(text).toMatch(/^rate_limit_rejections_total/m);
    expect((await request(url).get("/metrics")).status).toBe(404);
  });

  it("when METRICS_PORT is 0, then the start says the metrics took a free port, and that off is what turns them off", () => {
    const line = logs.lines.find((l) => l.metricsPort === service.metricsPort && typeof l.msg === "string" && l.msg.startsWith("METRICS_PORT=0"));
    expect(line?.msg).toBe(`METRICS_PORT=0: the metrics are served on a free port, 127.0.0.1:${service.metricsPort}; METRICS_PORT=off serves none`);
  });

  it("when a client sends its headers too slowly, then the server drops it after HEADERS_TIMEOUT_MS", async () => {
    const socket = net.connect(service.port, "127.0.0.1");
    await once(socket, "connect");
    socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n");
    const answer: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => answer.push(chunk));
    // Node's own default would wait a minute: the test's timeout is shorter.
    await once(socket, "close");
    expect(Buffer.concat(answer).toString()).toMatch(/^HTTP\/1\.1 408/);
  });

  it("when it stops with a request in flight, then readiness turns false, the request finishes with 200, and the listener closes", async () => {
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    try {
      const direct = openDatabase({ kind: "postgres", url: dbUrl, poolMax: 1 });
      const key = (await new ApiUsers(direct.prisma).create("user_A")).apiKey;
      await direct.close();
      // The request is held in the database by a lock until the stop has begun: in flight for sure.
      await admin.query("BEGIN; LOCK TABLE players IN ACCESS EXCLUSIVE MODE");
      const inFlight = fetch(`${url}/api/player/get-all-players`, { headers: { "X-API-Key": key } });
      // (pg_stat_activity is a snapshot per transaction: cleared before each look.)
      await waitFor(
        async () =>
          (
            (await admin.query(
              "SELECT pg_stat_clear_snapshot(); SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            )) as unknown as pg.QueryResult[]
          )[1]!.rowCount! > 0,
      );
      const stopping = service.stop();
      expect(service.lifecycle.stopping).toBe(true);
      // No longer accepting, once the accept queue has been quiet for a moment.
      await waitFor(() =>
        fetch(`${url}/livez`).then(
          () => false,
          () => true,
        ),
      );
      await admin.query("COMMIT");
      const listed = await inFlight;
      expect(listed.status).toBe(200);
      // In flight when the stop began, answered after: the client is told not to reuse the connection.
      expect(listed.headers.get("connection")).toBe("close");
      expect(await listed.json()).toEqual([]);
      expect(await stopping).toBe(true);
      expect(logs.lines.some((l) => l.msg === "stopped" && l.graceful === true)).toBe(true);
    } finally {
      await admin.end();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
