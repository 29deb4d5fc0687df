import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../src/resources/index.js";
import { ALLOW_LIST } from "./helpers/allow-list.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { EXPIRED_EVENT_ID } from "./helpers/sse.js";

const TABLE = ALLOW_LIST;

const UNAUTHENTICATED = { code: 401, message: "API key missing or invalid: send a valid key in the X-API-Key header" };
const FORBIDDEN = { code: 403, message: "This API user may not call this route" };
const IN_NO_GROUP = {
  code: 403,
  message:
    "This API user is in no caller group, so it may call no route: an operator adds its name to CALLERS_USER_A, CALLERS_USER_B, CALLERS_USER_C or CALLERS_USER_D and restarts the server",
};

let t: TestApp;
const keys: Record<string, string> = {};
let revokedKey: string;
let rotatedOldKey: string;
let rotatedNewKey: string;

beforeAll(async () => {
  t = await startTestApp({
    env: { CALLERS_USER_A: "user-A,user_A,revoked-one,rotated-one", CALLERS_USER_B: "user-B,Mixed-Case" },
  });
  for (const name of ["user-A", "user_A", "user-B", "user-C", "user-D", "outsider", "mIXED-cASE"]) {
    keys[name] = await t.key(name);
  }
  revokedKey = await t.key("revoked-one");
  await t.users.revoke("revoked-one");
  rotatedOldKey = await t.key("rotated-one");
  rotatedNewKey = (await t.users.rotate("rotated-one", undefined, 0)).apiKey;
});
afterAll(() => t.close());

function call(method: string, path: string) {
  const agent = request(t.url);
  // The event stream never ends: an expired resume point makes it a 410 once the key and the caller passed.
  const url = `/api${path}${path === "/events" ? `?lastEventId=${EXPIRED_EVENT_ID}` : ""}`;
  return method === "GET" ? agent.get(url) : method === "POST" ? agent.post(url) : agent.patch(url);
}

function expectAuthorized(res: request.Response) {
  expect([401, 403]).not.toContain(res.status);
  if (res.status >= 400) expect(res.body).toEqual({ code: res.status, message: expect.any(String) });
}

describe("the declared routes", () => {
  it("are exactly the twelve routes of the allow-list table, with the same callers", () => {
    const declared = apiRoutes.map((r) => [r.method, r.path, [...r.callers].sort().join("")]);
    expect(declared.sort()).toEqual([...TABLE].sort());
  });
});

describe.each(TABLE)("%s %s", (method, path, groups) => {
  it("when no key is sent, then 401", async () => {
    const res = await call(method, path);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHENTICATED);
  });

  it("when the key is unknown or malformed, then 401", async () => {
    for (const key of ["gsk_" + "x".repeat(43), "not-a-key", "", " "]) {
      const res = await call(method, path).set("X-API-Key", key);
      expect(res.status, `key '${key}'`).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
    }
  });

  it("when the key was revoked, then 401", async () => {
    const res = await call(method, path).set("X-API-Key", revokedKey);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHENTICATED);
  });

  it("when the key was rotated, then the old key gets 401 and the new one passes", async () => {
    const old = await call(method, path).set("X-API-Key", rotatedOldKey);
    expect(old.status).toBe(401);
    expectAuthorized(await call(method, path).set("X-API-Key", rotatedNewKey));
  });

  it("when the key comes as a bearer token, or in both headers alike, then it passes", async () => {
    expectAuthorized(await call(method, path).set("Authorization", `Bearer ${keys["user-A"]}`));
    expectAuthorized(await call(method, path).set("X-API-Key", keys["user-A"]!).set("Authorization", `Bearer ${keys["user-A"]}`));
  });

  it("when both headers carry different keys, or Authorization is not a bearer token, then 401", async () => {
    const conflicting = await call(method, path).set("X-API-Key", keys["user-A"]!).set("Authorization", `Bearer ${keys["user-B"]}`);
    expect(conflicting.status).toBe(401);
    expect(conflicting.body).toEqual(UNAUTHENTICATED);
    const basic = await call(method, path).set("Authorization", `Basic ${Buffer.from("user-A:x").toString("base64")}`);
    expect(basic.status).toBe(401);
  });

  it(`when the caller is in groups ${groups.split("").join(", ")}, then it passes; otherwise 403`, async () => {
    const members: Record<string, string> = { A: "user-A", B: "user-B", C: "user-C", D: "user-D" };
    for (const [group, name] of Object.entries(members)) {
      const res = await call(method, path).set("X-API-Key", keys[name]!);
      if (groups.includes(group)) expectAuthorized(res);
      else {
        expect(res.status, `${name}`).toBe(403);
        expect(res.body).toEqual(FORBIDDEN);
      }
    }
  });

  it("when the caller is group A's second spelling, then it is group A", async () => {
    expectAuthorized(await call(method, path).set("X-API-Key", keys["user_A"]!));
  });

  it("when the registered name differs from the configured one only in case, then it is still that group", async () => {
    const res = await call(method, path).set("X-API-Key", keys["mIXED-cASE"]!);
    if (groups.includes("B")) expectAuthorized(res);
    else expect(res.status).toBe(403);
  });

  it("when the user is in no group, then 403 naming the CALLERS_USER_* settings that would let it in", async () => {
    const res = await call(method, path).set("X-API-Key", keys.outsider!);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(IN_NO_GROUP);
  });

  it("when bad input comes from a caller without rights, then 403; without a key, 401; from an allowed caller, 400", async () => {
    const bad = (req: request.Test) =>
      method === "GET" ? req.query({ unknownParameter: "x" }) : req.set("Content-Type", "application/json").send("{bad json");
    expect((await bad(call(method, path).set("X-API-Key", keys.outsider!))).status).toBe(403);
    expect((await bad(call(method, path))).status).toBe(401);
    const allowed = await bad(call(method, path).set("X-API-Key", keys["user-A"]!));
    expect(allowed.status).toBe(400);
  });
});
