import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RequestContext, requestContext } from "../src/core/context.js";
import { createLogger, type RequestLine, writeRequestLine } from "../src/core/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe("logs", () => {
  it("when keys travel in headers and bodies, then no log line holds one, and each request line names its id and user", async () => {
    const keyA = await t.key("user-A");
    const seen = [keyA];
    const api = () => request(t.url);
    await api().get("/api/player/get-all-players").set("X-API-Key", keyA);
    await api().get("/api/player/get-all-players").set("Authorization", `Bearer ${keyA}`);
    await api().get("/api/player/get-all-players").set("X-API-Key", keyA).set("Authorization", `Bearer ${keyA}x`);
    const created = await api().post("/api/inscription").set("X-API-Key", keyA).send({ username: "new-user" });
    seen.push(created.body.apiKey);
    await api().post("/api/inscription").set("X-API-Key", keyA).send({ username: "x", apiKey: keyA });
    await api().get("/api/no-route").set("X-API-Key", keyA);
    await api()
      .get(`/api/player/get-all-players?key=${keyA}`)
      .set("X-API-Key", "gsk_" + "z".repeat(43));
    await api().get("/api/player/get-all-players").set("X-Request-Id", keyA).set("X-API-Key", keyA);
    // A key inside an otherwise sane id (a client that builds ids from its config) is refused too.
    const prefixed = await api().get("/api/player/get-all-players").set("X-Request-Id", `req-${keyA}`).set("X-API-Key", keyA);
    expect(prefixed.headers["x-request-id"]).not.toContain(keyA.slice(4));
    const upper = await api()
      .get("/api/player/get-all-players")
      .set("X-Request-Id", `GSK_${keyA.slice(4)}`)
      .set("X-API-Key", keyA);
    expect(upper.headers["x-request-id"]).not.toContain(keyA.slice(4));
    const rotated = await t.users.rotate("user-A");
    seen.push(rotated.apiKey);

    const text = t.logs.raw.join("\n");
    expect(t.logs.raw.length).toBeGreaterThan(6);
    for (const key of seen) expect(text).not.toContain(key.slice(4));

    const requestLines = t.logs.lines.filter((l) => l.msg === "request");
    expect(requestLines).toHaveLength(10);
    for (const line of requestLines) expect(line.reqId).toEqual(expect.any(String));
    expect(requestLines[0]).toMatchObject({ user: "user-A", method: "GET", path: "/api/player/get-all-players", status: 200 });
    expect(requestLines[2]).toMatchObject({ status: 401 });
    expect(requestLines[2]!.user).toBeUndefined();
  });
});

describe("the request line", () => {
  it("is written byte for byte as pino writes it inside the request's context, whatever the path and user hold", () => {
    const written: string[] = [];
    const logger = createLogger("info", { write: (line: string) => void written.push(line) });
    const cases: [RequestContext, RequestLine][] = [
      [
        { requestId: "r-1", user: "user-A" },
        { method: "GET", path: "/api/player/get-player-by-nick", status: 200, ms: 1.3 },
      ],
      [{ requestId: "9f1c" }, { method: "POST", path: '/api/"quoted"\\back\u0001\u2028é😀\ud800', status: 401, ms: 0 }],
      [
        { requestId: "r-3", user: 'odd"name\n' },
        { method: "DELETE", path: "/", status: 503, ms: 15000.5 },
      ],
    ];
    // A cluster worker's logger is a child with bindings (main.ts): they are on its lines too.
    const worker = logger.child({ worker: 2 });
    for (const [ctx, line] of cases) {
      for (const log of [logger, worker]) {
        requestContext.run(ctx, () => log.info({ ...line }, "request"));
        writeRequestLine(log, ctx, line);
      }
    }
    const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":""');
    expect(written).toHaveLength(cases.length * 4);
    expect(written.filter((line) => line.includes('"worker":2,"reqId"'))).toHaveLength(cases.length * 2);
    for (let i = 0; i < written.length; i += 2) {
      expect(withoutTime(written[i + 1]!)).toBe(withoutTime(written[i]!));
      expect(JSON.parse(written[i + 1]!).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });
});
