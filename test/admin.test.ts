import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

/** The admin routes behind the console: API users, keys and the audit log, for groups A and B. */
let t: TestApp;
let admin: string;
let viewer: string;
beforeAll(async () => {
  t = await startTestApp({ env: { CALLERS_USER_A: "user-A", CALLERS_USER_B: "admin-b", CALLERS_USER_C: "user-C,plugin,plugin-2" } });
  admin = await t.key("admin-b");
  viewer = await t.key("user-C");
});
afterAll(async () => {
  await t.close();
});

const get = (path: string, key = admin) => request(t.url).get(`/api/admin${path}`).set("X-API-Key", key);
const post = (path: string, body: unknown, key = admin) =>
  request(t.url)
    .post(`/api/admin${path}`)
    .set("X-API-Key", key)
    .send(body as object);
const players = (key: string) => request(t.url).get("/api/player/get-all-players").set("X-API-Key", key);

describe("who may call the admin routes", () => {
  it("when a key of group C calls any of them, then 403; group B passes; without a key, 401", async () => {
    expect((await get("/session", viewer)).status).toBe(403);
    expect((await get("/users", viewer)).status).toBe(403);
    expect((await get("/audit", viewer)).status).toBe(403);
    expect((await post("/users/rotate-key", { username: "user-C" }, viewer)).status).toBe(403);
    expect((await post("/users/revoke", { username: "user-C" }, viewer)).status).toBe(403);
    expect((await request(t.url).get("/api/admin/users")).status).toBe(401);
    const session = await get("/session");
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ username: "admin-b", role: "USER", groups: ["B"] });
  });
});

describe("API users and their keys", () => {
  it("when listed, then each user shows its groups, key hint, state and addresses, and no key material", async () => {
    const res = await get("/users");
    expect(res.status).toBe(200);
    const me = (res.body as { users: Record<string, unknown>[] }).users.find((u) => u.username === "admin-b");
    expect(me).toMatchObject({
      role: "USER",
      groups: ["B"],
      status: "active",
      keyHint: admin.slice(0, 8),
      rotatedAt: null,
      revokedAt: null,
      allowedAddresses: null,
      pendingRotation: null,
    });
    expect(JSON.stringify(res.body)).not.toContain(admin.slice(8));
  });

  it("when a key is rotated with a grace period, then the new key is shown once, both work until the expiry shown, and the listing says so", async () => {
    const old = await t.key("plugin");
    const rotating = Date.now();
    const res = await post("/users/rotate-key", { username: "PLUGIN", graceSeconds: 600 });
    const rotated = Date.now();
    expect(res.status).toBe(200);
    const { apiKey, user } = res.body as { apiKey: string; user: { pendingRotation: { expiresAt: string; keyHint: string }; keyHint: string } };
    expect(user.keyHint).toBe(apiKey.slice(0, 8));
    expect(user.pendingRotation.keyHint).toBe(old.slice(0, 8));
    // Shown to the second.
    expect(Date.parse(user.pendingRotation.expiresAt)).toBeGreaterThanOrEqual(Math.floor((rotating + 600_000) / 1000) * 1000);
    expect(Date.parse(user.pendingRotation.expiresAt)).toBeLessThanOrEqual(rotated + 600_000);
    expect((await players(old)).status).toBe(200);
    expect((await players(apiKey)).status).toBe(200);
    const listed = (await get("/users")).body as { users: { username: string; pendingRotation: unknown }[] };
    expect(listed.users.find((u) => u.username === "plugin")!.pendingRotation).toEqual(user.pendingRotation);

    const revoked = await post("/users/revoke", { username: "plugin" });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: "revoked", pendingRotation: null });
    expect((await players(old)).status).toBe(401);
    expect((await players(apiKey)).status).toBe(401);
    expect(await post("/users/revoke", { username: "plugin" })).toMatchObject({ status: 409, body: { message: "API user 'plugin' is already revoked" } });
  });

  it("when rotated without graceSeconds, then the old key keeps working 24 h; with 0, it stops at once", async () => {
    const old = await t.key("plugin-2");
    const day = await post("/users/rotate-key", { username: "plugin-2" });
    expect(Date.parse((day.body as { user: { pendingRotation: { expiresAt: string } } }).user.pendingRotation.expiresAt) - Date.now()).toBeGreaterThan(
      86_395_000,
    );
    expect((await players(old)).status).toBe(200);
    const now = await post("/users/rotate-key", { username: "plugin-2", graceSeconds: 0 });
    expect((now.body as { user: { pendingRotation: unknown } }).user.pendingRotation).toBeNull();
    expect((await players(old)).status).toBe(401);
    expect((await players((day.body as { apiKey: string }).apiKey)).status).toBe(401);
    expect((await players((now.body as { apiKey: string }).apiKey)).status).toBe(200);
  });

  it("when the input is wrong, then 400 naming the field, or 404 for an unknown user, and nothing changes", async () => {
    for (const graceSeconds of [-1, 1.5, 2_592_001, "60", null]) {
      const res = await post("/users/rotate-key", { username: "user-C", graceSeconds });
      expect(res.status, String(graceSeconds)).toBe(400);
      expect(res.body.message).toContain("graceSeconds");
    }
    expect((await players(viewer)).status).toBe(200);
    expect(await post("/users/rotate-key", { username: "ghost" })).toMatchObject({ status: 404, body: { message: "API user 'ghost' not found" } });
    expect(await post("/users/revoke", { username: "ghost" })).toMatchObject({ status: 404 });
    expect((await post("/users/revoke", { username: "user-C", keyHash: "x" })).status).toBe(400);
    expect((await players(viewer)).status).toBe(200);
  });

  it("when an admin would revoke itself, or allow its own key only elsewhere, then 409, and its key still works", async () => {
    const self = await post("/users/revoke", { username: "ADMIN-B" });
    expect(self.body).toEqual({
      code: 409,
      message: "username: 'ADMIN-B' is the API user making this request; revoke it with another admin's key, or with the command line (user revoke)",
    });
    const patch = (allowedAddresses: string[]) =>
      request(t.url).patch("/api/admin/users/allowed-addresses").set("X-API-Key", admin).send({ username: "admin-b", allowedAddresses });
    const elsewhere = await patch(["203.0.113.0/24"]);
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.message).toMatch(/^allowedAddresses: none of them is .*127\.0\.0\.1.*it would lock itself out$/);
    expect((await get("/session")).status).toBe(200);
    // Where it calls from is fine: the test client is on loopback.
    expect((await patch(["127.0.0.0/8", "::1"])).status).toBe(200);
    expect((await get("/session")).status).toBe(200);
    expect(
      (await request(t.url).patch("/api/admin/users/allowed-addresses").set("X-API-Key", admin).send({ username: "admin-b", allowedAddresses: null })).status,
    ).toBe(200);
  });

  it("when allowed addresses are set, then the key works only from there; bad entries are each named; null is anywhere again", async () => {
    const patch = (body: unknown) =>
      request(t.url)
        .patch("/api/admin/users/allowed-addresses")
        .set("X-API-Key", admin)
        .send(body as object);
    const bad = await patch({ username: "user-C", allowedAddresses: ["10.0.0.0/8", "not-an-ip", "300.1.1.1"] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^allowedAddresses: .*not-an-ip.*300\.1\.1\.1/);
    expect((await patch({ username: "user-C", allowedAddresses: [] })).status).toBe(400);
    expect((await players(viewer)).status).toBe(200);
    const set = await patch({ username: "user-C", allowedAddresses: ["203.0.113.0/24"] });
    expect(set.status).toBe(200);
    expect(set.body.allowedAddresses).toEqual(["203.0.113.0/24"]);
    expect((await players(viewer)).status).toBe(403);
    const cleared = await patch({ username: "user-C", allowedAddresses: null });
    expect(cleared.body.allowedAddresses).toBeNull();
    expect((await players(viewer)).status).toBe(200);
  });
});

describe("the audit log", () => {
  it("when filtered by actor and action, then only those entries, newest first, naming the admin and never a key", async () => {
    const res = await get("/audit?actor=ADMIN-B&action=api_user.rotate");
    expect(res.status).toBe(200);
    const entries = (res.body as { entries: { actor: string; action: string; target: string; id: string }[] }).entries;
    expect(entries.map((e) => e.target)).toEqual(["api_user:plugin-2", "api_user:plugin-2", "api_user:plugin"]);
    expect(entries.every((e) => e.actor === "admin-b" && e.action === "api_user.rotate")).toBe(true);
    expect(Number(entries[0]!.id)).toBeGreaterThan(Number(entries[1]!.id));
  });

  it("when paged, then each page links the next with the same filters, and the pages hold every entry once", async () => {
    const all = ((await get("/audit?limit=500")).body as { entries: { id: string }[] }).entries.map((e) => e.id);
    expect(all.length).toBeGreaterThan(5);
    const seen: string[] = [];
    let path: string | undefined = "/api/admin/audit?limit=2";
    while (path) {
      const res: request.Response = await request(t.url).get(path).set("X-API-Key", admin);
      expect(res.status).toBe(200);
      const body = res.body as { entries: { id: string }[]; nextCursor: string | null };
      seen.push(...body.entries.map((e) => e.id));
      const link: string | undefined = res.headers.link;
      if (body.nextCursor === null) expect(link).toBeUndefined();
      // Relative to the URL asked, as every paged route writes it.
      else expect(link).toBe(`<audit?limit=2&cursor=${body.nextCursor}>; rel="next"`);
      const next: URL | undefined = link ? new URL(/^<([^>]+)>/.exec(link)![1]!, `http://host${path}`) : undefined;
      path = next && next.pathname + next.search;
    }
    expect(seen).toEqual(all);
  });

  it("when filtered by time, then from is inclusive and to exclusive; bad values are 400 naming the parameter", async () => {
    const future = await get("/audit?from=2999-01-01T00:00:00Z");
    expect(future.body).toEqual({ entries: [], nextCursor: null });
    const past = await get("/audit?to=2000-01-01T00:00:00Z");
    expect(past.body.entries).toEqual([]);
    const today = await get(`/audit?from=${new Date(Date.now() - 3_600_000).toISOString()}&action=api_user.revoke`);
    expect(today.body.entries.map((e: { target: string }) => e.target)).toEqual(["api_user:plugin"]);
    expect((await get("/audit?from=yesterday")).body.message).toMatch(/^from: /);
    expect((await get("/audit?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z")).body.message).toMatch(/^to: /);
    expect((await get("/audit?limit=0")).body.message).toMatch(/^limit: /);
    expect((await get("/audit?cursor=bm90LWEtY3Vyc29y")).body.message).toMatch(/^cursor: /);
    expect((await get("/audit?cursor=a&cursor=b")).status).toBe(400);
  });
});
