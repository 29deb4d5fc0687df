import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importData } from "../../src/transfer/transfer.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makePlayer, unique } from "../helpers/fixtures.js";

const SHAPE_N = [
  "id",
  "pseudo",
  "credit",
  "gradeId",
  "modStatus",
  "staff",
  "alert",
  "nickname",
  "status",
  "chatId",
  "language",
  "streamerPoint",
  "tag",
  "color",
  "highclub",
  "vote",
];
const SHAPE_G = [
  "id",
  "pseudo",
  "token",
  "credit",
  "gradeId",
  "modStatus",
  "staff",
  "alert",
  "nickname",
  "firstConnection",
  "totalTimeConnection",
  "status",
  "ip",
  "chatId",
  "language",
  "streamerPoint",
  "tag",
  "color",
  "highclub",
  "vote",
];

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
});
afterAll(() => t.close());

const get = (path: string, query: Record<string, string | string[]> = {}) => request(t.url).get(`/api/player/${path}`).query(query).set("X-API-Key", key);
const prisma = () => t.database.db.prisma;

describe("GET /player/get-all-full-players-by-gradeId", () => {
  it("when players have the grade, then all of them as PlayerFull, ordered by id, with yyyy-mm-ddThh:mm:ssZ timestamps", async () => {
    const gradeId = 7001;
    const b = await makePlayer(prisma(), { gradeId: 7003, nickname: unique("nick"), chatId: "42", tag: "VIP", color: "#ff0", language: "EN" });
    const a = await makePlayer(prisma(), { gradeId, firstConnection: new Date("2025-01-02T03:04:05Z") });
    await makePlayer(prisma(), { gradeId: 7002 });
    // The first player joins the grade last: neither the table nor the grade index holds them in id order now.
    await prisma().player.update({ where: { id: b.id }, data: { gradeId } });
    const res = await get("get-all-full-players-by-gradeId", { gradeId: String(gradeId) });
    expect(res.status).toBe(200);
    expect(res.body.map((p: { id: number }) => p.id)).toEqual([b.id, a.id].sort((x, y) => x - y));
    for (const p of res.body) expect(Object.keys(p)).toEqual(SHAPE_G);
    const full = res.body.find((p: { id: number }) => p.id === b.id);
    expect(full).toEqual({
      id: b.id,
      pseudo: b.pseudo,
      token: "secret-token",
      credit: 0,
      gradeId,
      modStatus: false,
      staff: false,
      alert: false,
      nickname: b.nickname,
      firstConnection: "2025-06-01T12:00:00Z",
      totalTimeConnection: 42.5,
      status: "Offline",
      ip: "203.0.113.9",
      chatId: "42",
      language: "EN",
      streamerPoint: 0,
      tag: "VIP",
      color: "#ff0",
      highclub: false,
      vote: 0,
    });
    expect(res.body.find((p: { id: number }) => p.id === a.id).firstConnection).toBe("2025-01-02T03:04:05Z");
  });

  it("when no player has the grade, then []", async () => {
    const res = await get("get-all-full-players-by-gradeId", { gradeId: "-999" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it.each([
    [{}, "gradeId: required"],
    [{ gradeId: "" }, "gradeId: expected an integer"],
    [{ gradeId: "abc" }, "gradeId: expected an integer"],
    [{ gradeId: "1.5" }, "gradeId: expected an integer"],
    [{ gradeId: "2147483648" }, "gradeId: expected at most 2147483647"],
    [{ gradeId: "-2147483649" }, "gradeId: expected at least -2147483648"],
    [{ gradeId: "99999999999" }, "gradeId: expected an integer"],
    [{ gradeId: ["1", "2"] }, "gradeId: expected a single value, received array"],
    [{ gradeId: "1", gradeid: "1" }, "gradeid: unknown field"],
  ])("when the query is %j, then 400 '%s'", async (query, message) => {
    const res = await get("get-all-full-players-by-gradeId", query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message });
  });
});

describe("GET /player/get-all-players", () => {
  it("when players exist, then every one as PlayerSummary — never token, ip, firstConnection or totalTimeConnection — ordered by id", async () => {
    const p = await makePlayer(prisma(), { nickname: unique("n"), credit: 12, vote: 3, highclub: true });
    await makePlayer(prisma());
    await prisma().player.update({ where: { id: p.id }, data: { credit: 12 } });
    const res = await get("get-all-players");
    expect(res.status).toBe(200);
    const ids = res.body.map((x: { id: number }) => x.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    for (const x of res.body) expect(Object.keys(x)).toEqual(SHAPE_N);
    expect(res.body.find((x: { id: number }) => x.id === p.id)).toEqual({
      id: p.id,
      pseudo: p.pseudo,
      credit: 12,
      gradeId: 0,
      modStatus: false,
      staff: false,
      alert: false,
      nickname: p.nickname,
      status: "Offline",
      chatId: null,
      language: "FR",
      streamerPoint: 0,
      tag: null,
      color: null,
      highclub: true,
      vote: 3,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/token|"ip"|firstConnection|totalTimeConnection|secret-token/);
  });

  it("when a query parameter is sent, then 400 naming it", async () => {
    const res = await get("get-all-players", { page: "2" });
    expect(res.body).toEqual({ code: 400, message: "page: unknown field" });
  });

  it("when the community has 10,000 players, then all of them are listed", async () => {
    const players = Array.from({ length: 10_000 }, (_, i) => ({
      id: 100_000 + i,
      pseudo: `bulk${i}`,
      token: "t",
      credit: i,
      gradeId: 3,
      modStatus: false,
      staff: false,
      alert: false,
      nickname: null,
      firstConnection: "2025-01-01T00:00:00Z",
      totalTimeConnection: 0,
      status: "Offline",
      ip: "::1",
      chatId: null,
      language: "FR",
      streamerPoint: 0,
      tag: null,
      color: null,
      highclub: false,
      vote: 0,
    }));
    await importData(prisma(), { players });
    const res = await get("get-all-players");
    expect(res.status).toBe(200);
    const bulk = res.body.filter((x: { id: number }) => x.id >= 100_000);
    expect(bulk).toHaveLength(10_000);
    expect(bulk[9_999]).toMatchObject({ id: 109_999, pseudo: "bulk9999", credit: 9_999 });
  }, 120_000);
});

describe("GET /player/get-player-by-nick", () => {
  it("when nick equals a pseudo in another case, then that player as PlayerSummary", async () => {
    const p = await makePlayer(prisma(), { pseudo: unique("Steve") });
    const res = await get("get-player-by-nick", { nick: p.pseudo.toUpperCase() });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(SHAPE_N);
    expect(res.body).toMatchObject({ id: p.id, pseudo: p.pseudo });
  });

  it("when nick equals a nickname, then that player", async () => {
    const p = await makePlayer(prisma(), { nickname: unique("Nick") });
    const res = await get("get-player-by-nick", { nick: p.nickname!.toLowerCase() });
    expect(res.body).toMatchObject({ id: p.id, nickname: p.nickname });
  });

  it("when nick is one player's pseudo and another's nickname, then the pseudo wins", async () => {
    const name = unique("Shared");
    const byNickname = await makePlayer(prisma(), { nickname: name.toLowerCase() });
    const byPseudo = await makePlayer(prisma(), { pseudo: name.toUpperCase() });
    const res = await get("get-player-by-nick", { nick: name });
    expect(res.body.id).toBe(byPseudo.id);
    expect(byNickname.id).not.toBe(byPseudo.id);
  });

  it("when match=pseudo (a game server's join path) and nick is only another player's nickname, then 404; their pseudo, then that player", async () => {
    const name = unique("Stevie");
    const owner = await makePlayer(prisma(), { nickname: name });
    const newcomer = await get("get-player-by-nick", { nick: name.toLowerCase(), match: "pseudo" });
    expect(newcomer.status).toBe(404);
    expect(newcomer.body).toEqual({ code: 404, message: "Player not found" });
    // Without it, the route as the spec gives it: the nickname's owner.
    expect((await get("get-player-by-nick", { nick: name })).body.id).toBe(owner.id);
    expect((await get("get-player-by-nick", { nick: name, match: "any" })).body.id).toBe(owner.id);
    const byPseudo = await get("get-player-by-nick", { nick: owner.pseudo.toUpperCase(), match: "pseudo" });
    expect(byPseudo.body).toMatchObject({ id: owner.id, pseudo: owner.pseudo });
  });

  it("when nick holds _ or %, then they are plain characters, not wildcards", async () => {
    const p = await makePlayer(prisma(), { pseudo: unique("Under") });
    const res = await get("get-player-by-nick", { nick: `${p.pseudo.slice(0, -1)}_` });
    expect(res.status).toBe(404);
    expect((await get("get-player-by-nick", { nick: "%" })).status).toBe(404);
  });

  it("when no player matches, then 404 with a generic message", async () => {
    const res = await get("get-player-by-nick", { nick: unique("nobody") });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: "Player not found" });
  });

  it.each([
    [{}, "nick: required"],
    [{ nick: "" }, "nick: expected a non-empty string"],
    [{ nick: "x".repeat(65) }, "nick: expected at most 64 characters"],
    [{ nick: ["a", "b"] }, "nick: expected a single value, received array"],
    [{ nick: "Steve", match: "nickname" }, "match: expected any or pseudo"],
  ])("when the query is %j, then 400 '%s'", async (query, message) => {
    const res = await get("get-player-by-nick", query);
    expect(res.body).toEqual({ code: 400, message });
  });
});
