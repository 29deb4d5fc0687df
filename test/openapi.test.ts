import { readFileSync } from "node:fs";
import { validate } from "@readme/openapi-parser";
import express from "express";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatedApiFiles } from "../scripts/api-files.js";
import { documentedStatuses } from "../src/api-document/openapi.js";
import { ERROR_CATALOGUE } from "../src/core/errors.js";
import type { AppDeps } from "../src/http/deps.js";
import { registerRoutes } from "../src/http/register-routes.js";
import { apiRoutes } from "../src/resources/index.js";
import { ALLOW_LIST, VERSIONS } from "./helpers/allow-list.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { document } from "./helpers/contract.js";

type Operation = {
  summary?: string;
  description?: string;
  "x-callers"?: string[];
  "x-version"?: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op: op as unknown as Operation })),
);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    expect((document as unknown as { openapi: string }).openapi).toBe("3.1.0");
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });

  it("has the same operations as the routes Express serves and as the allow-list table, with the same callers", () => {
    const router = express.Router();
    registerRoutes(router, apiRoutes, {} as AppDeps);
    const served = router.stack
      .filter((layer) => layer.route && !(layer.route as unknown as { methods: Record<string, boolean> }).methods._all)
      .flatMap((layer) =>
        Object.keys((layer.route as unknown as { methods: Record<string, boolean> }).methods).map((m) => `${m.toUpperCase()} ${layer.route!.path}`),
      );
    const documented = operations.map((o) => `${o.method} ${o.path}`);
    const table = ALLOW_LIST.map(([method, path]) => `${method} ${path}`);
    expect(served.sort()).toEqual(table.sort());
    expect(documented.sort()).toEqual(table.sort());
    for (const [method, path, groups] of ALLOW_LIST) {
      const op = operations.find((o) => o.method === method && o.path === path)!.op;
      expect(op["x-callers"], path).toEqual(groups.split(""));
      expect(op.description, path).toContain(`caller groups ${groups.split("").join(", ")}`);
    }
  });

  it("gives every operation a summary, a description, the spec's version label where it has one, and every status it can answer", () => {
    for (const { path, method, op } of operations) {
      expect(op.summary, path).toBeTruthy();
      expect(op.description, path).toBeTruthy();
      expect(op["x-version"], path).toBe(VERSIONS[path]);
      const route = apiRoutes.find((r) => r.path === path && r.method === method)!;
      const expected = [
        String(route.successStatus ?? 200),
        ...(route.method === "GET" && (route.etag || route.versioned) ? ["304"] : []),
        ...documentedStatuses(route).map(String),
      ].sort();
      expect(Object.keys(op.responses).sort(), path).toEqual(expected);
      for (const status of documentedStatuses(route)) {
        expect(op.responses[String(status)]!.content!["application/json"]!.schema, `${path} ${status}`).toEqual({ $ref: "#/components/schemas/Error" });
      }
    }
  });

  it("documents both ways of sending the key", () => {
    const d = document as unknown as { security: unknown; components: { securitySchemes: Record<string, unknown> } };
    expect(d.security).toEqual([{ ApiKey: [] }, { Bearer: [] }]);
    expect(d.components.securitySchemes).toMatchObject({
      ApiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      Bearer: { type: "http", scheme: "bearer" },
    });
  });

  it("is served at /api/openapi.json and the docs page at /api/docs, without a key and from our own files", async () => {
    const json = await request(t.url).get("/api/openapi.json");
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ ...JSON.parse(JSON.stringify(document)), servers: [{ url: `${t.url}/api`, description: "This server" }] });
    const page = await request(t.url).get("/api/docs");
    // Behind a path prefix (PUBLIC_URL=https://host/prefix) the page must find its files: no absolute paths.
    expect(page.text).not.toMatch(/(?:href|src)="\//);
    const slash = await request(t.url).get("/api/docs/");
    expect([slash.status, slash.headers.location]).toEqual([301, "../docs"]);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    for (const src of page.text.match(/(?:src|href)="([^"]+)"/g)!.map((m) => m.split('"')[1]!)) {
      expect(src, "no outside address").toMatch(/^docs\//);
      expect((await request(t.url).get(new URL(src, `${t.url}/api/docs`).pathname)).status, src).toBe(200);
    }
  });

  it("when any other file of the Swagger UI package is asked for, then it is a 404, and the page's policy upgrades nothing to HTTPS", async () => {
    for (const file of ["package.json", "README.md", "index.html", "swagger-ui.js", "swagger-ui-bundle.js.map", "../package.json", "%2e%2e%2fpackage.json"]) {
      const res = await request(t.url).get(`/api/docs/assets/${file}`);
      expect(res.status, file).toBe(404);
      expect(res.text, file).not.toContain('"name": "swagger-ui-dist"');
    }
    const page = await request(t.url).get("/api/docs");
    // Behind a path prefix (PUBLIC_URL=https://host/prefix) the page must find its files: no absolute paths.
    expect(page.text).not.toMatch(/(?:href|src)="\//);
    const slash = await request(t.url).get("/api/docs/");
    expect([slash.status, slash.headers.location]).toEqual([301, "../docs"]);
    expect(page.headers["content-security-policy"]).toBe(
      "default-src 'self';base-uri 'self';form-action 'self';frame-ancestors 'none';img-src 'self' data:;object-src 'none';" +
        "script-src-attr 'none';style-src 'self'",
    );
  });

  it("is current in docs/openapi.json, docs/API.md and clients/typescript/src/schema.ts (run npm run api:generate after changing a route)", async () => {
    for (const [path, content] of Object.entries(await generatedApiFiles())) {
      expect(readFileSync(path, "utf8"), `${path} is stale: run npm run api:generate`).toBe(content);
    }
  });
});

describe("the error catalogue's documentation", () => {
  it("lists exactly the catalogue's errors, with the same status, meaning and advice, in docs/API.md", () => {
    const reference = readFileSync("docs/API.md", "utf8");
    const section = reference.slice(reference.indexOf("\n## Errors\n"));
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (.+?) \| (.+?) \|$/gm)].map((m) => ({
      kind: m[1]!,
      status: Number(m[2]),
      meaning: m[3]!,
      action: m[4]!,
    }));
    const catalogue = Object.entries(ERROR_CATALOGUE).map(([kind, e]) => ({ kind, status: e.status, meaning: e.meaning, action: e.action }));
    expect(rows).toEqual(catalogue);
  });
});
