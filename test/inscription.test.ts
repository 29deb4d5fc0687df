import { createHash } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

let t: TestApp;
let adminKey: string;
beforeAll(async () => {
  t = await startTestApp();
  adminKey = await t.key("user-B");
});
afterAll(() => t.close());

const register = (body: unknown, key = adminKey) =>
  request(t.url)
    .post("/api/inscription")
    .set("X-API-Key", key)
    .send(body as object);

describe("POST /inscription", () => {
  it("when a new name is registered, then 201 with exactly username, role USER and a gsk_ key", async () => {
    const res = await register({ username: "website" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["apiKey", "role", "username"]);
    expect(res.body).toMatchObject({ username: "website", role: "USER" });
    expect(res.body.apiKey).toMatch(/^gsk_[A-Za-z0-9_-]{43}$/);
  });

  it("when a role is given, then it is stored and returned", async () => {
    const res = await register({ username: "stats.bot", role: "PLUGIN_STATS" });
    expect(res.status).toBe(201);
    expect(res.body.role).toBe("PLUGIN_STATS");
    const row = await t.database.db.prisma.apiUser.findUnique({ where: { username: "stats.bot" } });
    expect(row?.role).toBe("PLUGIN_STATS");
  });

  it("when the key is returned, then it works at once and only its SHA-256 is stored", async () => {
    const res = await register({ username: "user-C" });
    const list = await request(t.url).get("/api/player/get-all-players").set("X-API-Key", res.body.apiKey);
    expect(list.status).toBe(200);
    const row = await t.database.db.prisma.apiUser.findUniqueOrThrow({ where: { username: "user-C" } });
    expect(row.keyHash).toBe(createHash("sha256").update(res.body.apiKey).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(res.body.apiKey);
    expect(row.keyHint).toBe(res.body.apiKey.slice(0, 8));
  });

  it("when the name is taken in another case, then 409 naming the value and the constraint, and nothing changes", async () => {
    await register({ username: "Lobby-Plugin" });
    const res = await register({ username: "LOBBY-plugin", role: "OTHER" });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      code: 409,
      message: "Username 'LOBBY-plugin' is already used (unique constraint api_users_username_key, case-insensitive)",
    });
    const rows = await t.database.db.prisma.apiUser.findMany({ where: { username: "lobby-plugin" } });
    expect(rows.map((r) => [r.username, r.role])).toEqual([["Lobby-Plugin", "USER"]]);
  });

  it.each([
    [{}, "username: required"],
    [{ username: "ab" }, "username: expected 3 to 32 characters"],
    [{ username: "a".repeat(33) }, "username: expected 3 to 32 characters"],
    [{ username: "with space" }, "username: expected only letters, digits, '_', '-' and '.'"],
    [{ username: "émile" }, "username: expected only letters, digits, '_', '-' and '.'"],
    [{ username: "--json" }, "username: must not begin with '-' (a command line would read it as an option)"],
    [{ username: "-rf" }, "username: must not begin with '-' (a command line would read it as an option)"],
    [{ username: null }, "username: expected string, received null"],
    [{ username: ["abc"] }, "username: expected string, received array"],
    [{ username: "valid-name", role: "admin" }, "role: expected only capital letters and '_'"],
    [{ username: "valid-name", role: "" }, "role: expected 1 to 32 characters"],
    [{ username: "valid-name", role: null }, "role: expected string, received null"],
    [{ username: "valid-name", apiKey: "gsk_mine" }, "apiKey: unknown field"],
  ])("when the body is %j, then 400 '%s' and nothing is stored", async (body, message) => {
    const before = await t.database.db.prisma.apiUser.count();
    const res = await register(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message });
    expect(await t.database.db.prisma.apiUser.count()).toBe(before);
  });

  it("when many clients register the same name at once, then exactly one 201 and the rest 409", async () => {
    const attempts = 25;
    const results = await Promise.all(Array.from({ length: attempts }, (_, i) => register({ username: i % 2 ? "race-winner" : "RACE-WINNER" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(attempts - 1);
    expect(await t.database.db.prisma.apiUser.count({ where: { username: "race-winner" } })).toBe(1);
  });

  it("when a user of group C or D calls it, then 403", async () => {
    const res = await register({ username: "sneaky" }, await t.key("user-D"));
    expect(res.status).toBe(403);
  });
});
