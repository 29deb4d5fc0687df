import net from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { errors } from "../src/core/errors.js";
import { defineRoute } from "../src/http/route.js";
import { apiRoutes } from "../src/resources/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { contractChecker, document } from "./helpers/contract.js";

/** What a generated client needs from the document, beyond the bodies: headers, types, servers. */
type Parameter = { in: string; name: string; required?: boolean; schema: Record<string, unknown> };
type Operation = { parameters?: Parameter[]; responses: Record<string, { headers?: Record<string, { $ref: string }> }> };
const doc = document as unknown as {
  servers: unknown;
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, { required?: boolean }> };
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);
const op = (method: string, path: string) => doc.paths[path]![method.toLowerCase()]!;
const headersOf = (method: string, path: string, status: number) => Object.keys(op(method, path).responses[String(status)]!.headers ?? {});

const CONDITIONAL_GETS = [
  "/player/get-all-full-players-by-gradeId",
  "/player/get-all-players",
  "/infecte2/get-all-infectes",
  "/temporary-item/get-active-items",
  "/parkour/get-all-maps",
  "/cosmetic/get-cosmetic",
  "/infecte2/get-leaderboard",
  "/infecte2/get-leaderboard-rank",
  "/infecte2/get-leaderboard-around",
];

describe("the headers in the OpenAPI document", () => {
  it("when an operation answers, then every status declares X-Request-Id, and only authenticated answers the RateLimit headers", () => {
    for (const { path, method, op: o } of operations) {
      for (const [status, response] of Object.entries(o.responses)) {
        const names = Object.keys(response.headers ?? {});
        expect(names, `${method} ${path} ${status}`).toContain("X-Request-Id");
        const authenticated = !["401", "408", "431"].includes(status);
        expect(names.includes("RateLimit") && names.includes("RateLimit-Policy"), `${method} ${path} ${status}`).toBe(authenticated);
        expect(names.includes("Retry-After"), `${method} ${path} ${status}`).toBe(status === "429" || status === "503");
      }
    }
  });

  it("when a GET is conditional, then it takes If-None-Match and sends ETag on 200 and 304; update-cosmetic takes If-Match and sends ETag", () => {
    const conditional = operations.filter((o) => o.op.parameters?.some((p) => p.in === "header" && p.name === "If-None-Match"));
    expect(conditional.map((o) => o.path).sort()).toEqual([...CONDITIONAL_GETS].sort());
    for (const path of CONDITIONAL_GETS) {
      expect(headersOf("GET", path, 200), path).toContain("ETag");
      expect(headersOf("GET", path, 304), path).toContain("ETag");
    }
    expect(op("PATCH", "/cosmetic/update-cosmetic").parameters?.map((p) => p.name)).toEqual(["If-Match"]);
    expect(headersOf("PATCH", "/cosmetic/update-cosmetic", 200)).toContain("ETag");
    expect(headersOf("PATCH", "/cosmetic/update-cosmetic", 412)).not.toContain("ETag");
  });

  it("when an operation is a POST, then it takes Idempotency-Key and declares Idempotent-Replayed on the answers a replay can give", () => {
    for (const route of apiRoutes.filter((r) => r.method === "POST")) {
      expect(op("POST", route.path).parameters?.find((p) => p.name === "Idempotency-Key")?.in, route.path).toBe("header");
      expect(headersOf("POST", route.path, route.successStatus ?? 200), route.path).toContain("Idempotent-Replayed");
      expect(headersOf("POST", route.path, 400), route.path).not.toContain("Idempotent-Replayed");
    }
    expect(headersOf("POST", "/inscription", 409)).toContain("Idempotent-Replayed");
  });

  it("when a header is declared, then it is written once, under components.headers, and referenced", () => {
    const refs = new Set(operations.flatMap((o) => Object.values(o.op.responses).flatMap((r) => Object.values(r.headers ?? {}).map((h) => h.$ref))));
    expect([...refs].sort()).toEqual(
      Object.keys(doc.components.headers)
        .map((n) => `#/components/headers/${n}`)
        .sort(),
    );
  });
});

describe("the types in the OpenAPI document", () => {
  it("when a query parameter holds a number, then it is an int32 integer with the range the server checks", () => {
    expect(op("GET", "/cosmetic/get-cosmetic").parameters?.find((p) => p.name === "id")?.schema).toMatchObject({
      type: "integer",
      format: "int32",
      minimum: 1,
      maximum: 2_147_483_647,
    });
    expect(op("GET", "/player/get-all-full-players-by-gradeId").parameters?.find((p) => p.name === "gradeId")?.schema).toMatchObject({
      type: "integer",
      format: "int32",
      minimum: -2_147_483_648,
      maximum: 2_147_483_647,
    });
  });

  it("when any schema is an integer, then it has a format and a range", () => {
    const found: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (node === null || typeof node !== "object") return;
      const o = node as Record<string, unknown>;
      if (o.type === "integer") {
        found.push(where);
        expect(o.format, where).toMatch(/^int(32|64)$/);
        expect(typeof o.minimum === "number" && typeof o.maximum === "number", where).toBe(true);
      }
      for (const [k, v] of Object.entries(o)) walk(v, `${where}/${k}`);
    };
    walk(document, "");
    expect(found.length).toBeGreaterThan(30);
  });

  it("when a request takes a timestamp, then it is a date-time string saying which forms are accepted", () => {
    const body = (method: string, path: string) =>
      (op(method, path) as unknown as { requestBody: { content: { "application/json": { schema: { properties: Record<string, Record<string, unknown>> } } } } })
        .requestBody.content["application/json"].schema.properties;
    for (const field of [body("POST", "/website/create-reward-log").rewardedAt!, body("PATCH", "/freebuild/update-world").lastUsed!]) {
      expect(field).toMatchObject({ type: "string", format: "date-time" });
      expect(field.description).toMatch(/Z or an offset/);
    }
  });

  it("when a client author reads it, then it uses no internal shorthand", () => {
    const text = JSON.stringify(document);
    for (const jargon of [/shape [A-Z]\b/, /decisions/i, /\bthe spec\b/i, /\bspec's\b/i, /\bsic\b/]) expect(text).not.toMatch(jargon);
  });
});

describe("the servers of the OpenAPI document", () => {
  it("when committed, then it holds a template a generator can fill in with the deployment's origin", () => {
    expect(doc.servers).toEqual([
      {
        url: "{origin}/api",
        description: expect.any(String),
        variables: { origin: { default: "http://localhost:3000", description: expect.any(String) } },
      },
    ]);
  });

  describe("when served", () => {
    let plain: TestApp;
    let proxied: TestApp;
    let configured: TestApp;
    beforeAll(async () => {
      plain = await startTestApp();
      [proxied, configured] = await Promise.all([
        startTestApp({ database: plain.database, env: { TRUST_PROXY: "loopback" } }),
        startTestApp({ database: plain.database, env: { PUBLIC_URL: "https://api.example.org/community/" } }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([proxied.close(), configured.close()]);
      await plain.close();
    });
    const servers = async (app: TestApp, headers: Record<string, string> = {}) =>
      (await request(app.url).get("/api/openapi.json").set(headers)).body.servers as unknown;

    it("when PUBLIC_URL is set, then servers is that URL's /api, whatever the request says", async () => {
      expect(await servers(configured, { Host: "evil.example" })).toEqual([{ url: "https://api.example.org/community/api", description: "This server" }]);
    });

    it("when PUBLIC_URL is unset, then servers is the origin the request came to, forwarded only by a trusted proxy", async () => {
      expect(await servers(plain)).toEqual([{ url: `${plain.url}/api`, description: "This server" }]);
      const forwarded = { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.org" };
      expect(await servers(plain, forwarded)).toEqual([{ url: `${plain.url}/api`, description: "This server" }]);
      expect(await servers(proxied, forwarded)).toEqual([{ url: "https://api.example.org/api", description: "This server" }]);
    });

    it("when the host is unfit for a URL, then the template is served instead", async () => {
      expect(await servers(proxied, { "X-Forwarded-Host": "a.example/evil?x=" })).toEqual(doc.servers);
    });

    it("when the request names no host at all, then the template is served, not a URL of 'undefined'", async () => {
      const socket = net.connect(Number(new URL(plain.url).port), "127.0.0.1");
      socket.end("GET /api/openapi.json HTTP/1.0\r\n\r\n");
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const answer = Buffer.concat(chunks).toString("utf8");
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect((JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { servers: unknown }).servers).toEqual(doc.servers);
    });
  });
});

describe("the contract check of the test apps", () => {
  const check = contractChecker(apiRoutes);
  const maps = { method: "GET", path: "/api/parkour/get-all-maps", status: 200, body: [] };
  const base = { "x-request-id": "r-1", etag: '"maps-v1"', "sync-token": "s1.MTox", "content-type": "application/json; charset=utf-8" };

  it("when a response has the headers its operation declares, then it passes", () => {
    expect(check({ ...maps, headers: base })).toBeUndefined();
    expect(check({ ...maps, headers: { ...base, ratelimit: '"user"; r=1; t=2', "x-frame-options": "DENY" } })).toBeUndefined();
  });

  it("when a response sends a header its operation does not declare for that status, then it fails naming it", () => {
    expect(check({ ...maps, headers: { ...base, "idempotent-replayed": "true" } })).toMatch(/idempotent-replayed is sent but not declared/);
    expect(check({ ...maps, status: 500, body: { code: 500, message: "x" }, headers: base })).toMatch(/etag is sent but not declared/);
  });

  it("when a response lacks a header declared as always sent, then it fails naming it", () => {
    expect(check({ ...maps, headers: { "x-request-id": "r-1" } })).toMatch(/etag is declared as always sent but missing/);
    expect(check({ ...maps, status: 304, headers: { etag: '"maps-v1"' } })).toMatch(/x-request-id is declared as always sent but missing/);
  });
});

describe("the headers the service sends", () => {
  /** A list whose version is read, then whose building fails: the database went away in between. */
  const failingList = defineRoute({
    method: "GET",
    path: "/probe/list-then-fail",
    summary: "a list that fails after its version is read",
    description: "test probe",
    callers: ["A"],
    query: z.strictObject({}),
    response: z.array(z.unknown()),
    etag: () => Promise.resolve("probe-v1"),
    handler: () => Promise.reject(errors.databaseUnavailable()),
  });
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ routes: [...apiRoutes, failingList] });
  });
  afterAll(() => t.close());

  it("when a conditional GET fails after its version is read, then the failure carries no ETag, and the 503 a Retry-After", async () => {
    const key = await t.key("user-A");
    const res = await request(t.url).get("/api/probe/list-then-fail").set("X-API-Key", key);
    expect(res.status).toBe(503);
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers["retry-after"]).toBe("1");
    const unchanged = await request(t.url).get("/api/probe/list-then-fail").set("X-API-Key", key).set("If-None-Match", '"probe-v1"');
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.etag).toBe('"probe-v1"');
  });
});
