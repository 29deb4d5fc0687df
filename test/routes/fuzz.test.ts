import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { RouteSpec } from "../../src/http/route.js";
import { apiRoutes } from "../../src/resources/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makeCosmetic, makePlayer, makeWorld } from "../helpers/fixtures.js";
import { EXPIRED_EVENT_ID } from "../helpers/sse.js";

/**
 * Property: whatever JSON a client puts in any field of any body or query of
 * any route, the answer is never a 5xx, and a failure is exactly
 * `{ code, message }` with `code` equal to the status. The fields come from
 * each route's own schema, so a new route or field is fuzzed without a change here.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

let t: TestApp;
let key: string;
const valid: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
  const prisma = t.database.db.prisma;
  const player = await makePlayer(prisma, { nickname: "fuzzy" });
  const cosmetic = await makeCosmetic(prisma);
  const world = await makeWorld(prisma, { ownerId: player.id });
  const answers = { video: "v", question1: "1", question2: "2", question3: "3", question4: "4", question5: "5" };
  Object.assign(valid, {
    "/player/get-all-full-players-by-gradeId": { gradeId: "0" },
    "/player/get-player-by-nick": { nick: "fuzzy" },
    "/cosmetic/get-cosmetic": { id: String(cosmetic.id) },
    "/cosmetic/update-cosmetic": { id: cosmetic.id, price: 5 },
    "/form/create-form": { playerId: player.id, ...answers },
    "/website/create-reward-log": { playerId: player.id, rewardId: 1 },
    "/inscription": { username: "fuzz-user" },
    "/freebuild/update-world": { id: world.id, state: "loaded" },
  });
});
afterAll(() => t.close());

/** Date-times as a client may write them: any moment, any offset, with or without fractions, at the calendar's edges. */
const dateTime = fc
  .tuple(
    fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("+010000-12-31T23:59:59Z"), noInvalidDate: true }),
    fc.constantFrom("Z", "+00:00", "+01:00", "-01:00", "+14:00", "-12:00", "+23:59"),
    fc.constantFrom("", ".5", ".123", ".999999999"),
  )
  .map(([d, offset, fraction]) => {
    const iso = d.toISOString();
    return `${iso.slice(0, 19)}${fraction}${offset}`;
  });

/** JSON values, plus the ones most likely to slip through a hand-written check. */
const jsonValue = fc.oneof(
  fc.jsonValue(),
  dateTime,
  fc.constantFrom("0001-01-01T00:00:00Z", "0099-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59-00:01", "0001-01-01T00:00:00+00:01"),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    null,
    "null",
    "",
    " ",
    "true",
    "false",
    0,
    -1,
    1.5,
    2 ** 31,
    -(2 ** 31) - 1,
    1e308,
    -0,
    "2026-02-30T00:00:00Z",
    "1e3",
    [],
    {},
    "\u0000",
    "💥".repeat(300),
  ),
);
const queryValue = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.constantFrom("", "-1", "2147483648", "0x10", " 1", "1 ", "%", "%00"),
);

function fields(schema: z.ZodType | undefined): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

function call(route: RouteSpec, query: Record<string, unknown>, body?: unknown) {
  const path = `/api${route.path}`;
  const agent = request(t.url);
  const req = route.method === "GET" ? agent.get(path) : route.method === "POST" ? agent.post(path) : agent.patch(path);
  req.set("X-API-Key", key).query(query as Record<string, string>);
  // The event stream never ends: an expired resume point makes every valid request a 410.
  if (route.eventStream) req.set("Last-Event-ID", EXPIRED_EVENT_ID);
  return body === undefined ? req : req.set("Content-Type", "application/json").send(JSON.stringify(body));
}

function expectWellFormed(res: request.Response, what: string) {
  expect(res.status, `${what} → ${res.status} ${res.text}`).toBeLessThan(500);
  expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
  if (res.status >= 400) {
    expect(Object.keys(res.body).sort(), what).toEqual(["code", "message"]);
    expect(res.body.code).toBe(res.status);
    expect(typeof res.body.message).toBe("string");
  }
}

describe.each(apiRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))("%s", (_name, route) => {
  const base = () => valid[route.path] ?? {};

  for (const field of fields(route.body)) {
    it(`when body.${field} is any JSON value (or absent), then a well-formed answer, never a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.option(jsonValue, { nil: undefined }), async (value) => {
          const body = { ...base(), [field]: value };
          expectWellFormed(await call(route, {}, body), JSON.stringify(body));
        }),
        { numRuns: RUNS },
      );
    });
  }

  if (route.body) {
    it("when the whole body is any JSON value, or has extra keys, then a well-formed answer", async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(jsonValue, fc.dictionary(fc.string(), jsonValue)), async (body) => {
          expectWellFormed(await call(route, {}, body), JSON.stringify(body));
        }),
        { numRuns: RUNS * 2 },
      );
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.string({ minLength: 1 }), jsonValue, { minKeys: 1 }), async (extra) => {
          const body = { ...extra, ...base() };
          expectWellFormed(await call(route, {}, body), JSON.stringify(body));
        }),
        { numRuns: RUNS },
      );
    });
  }

  for (const param of fields(route.query)) {
    it(`when query.${param} is any text or repeated, then a well-formed answer`, async () => {
      await fc.assert(
        fc.asyncProperty(queryValue, async (value) => {
          const query = { ...base(), [param]: value };
          expectWellFormed(await call(route, query), JSON.stringify(query));
        }),
        { numRuns: RUNS },
      );
    });
  }

  if (route.query) {
    it("when the query string is any text, then a well-formed answer", async () => {
      await fc.assert(
        fc.asyncProperty(fc.string(), fc.dictionary(fc.string(), queryValue), async (raw, extra) => {
          const path = `/api${route.path}?${encodeURI(raw).replace(/#/g, "%23")}`;
          const agent = request(t.url);
          const req = route.method === "GET" ? agent.get(path) : route.method === "POST" ? agent.post(path) : agent.patch(path);
          if (route.eventStream) req.set("Last-Event-ID", EXPIRED_EVENT_ID);
          expectWellFormed(await req.set("X-API-Key", key).query(extra as Record<string, string>), `${raw} ${JSON.stringify(extra)}`);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
