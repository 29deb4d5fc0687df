import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makePlayer } from "../helpers/fixtures.js";

/** The server's "now", fixed so that the bounds of an item's window can be tested exactly. */
const NOW = new Date("2026-11-22T12:00:00Z");

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ now: () => NOW });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const get = (path: string) => request(t.url).get(`/api${path}`).set("X-API-Key", key);
const ascending = (xs: number[]) => expect(xs).toEqual([...xs].sort((a, b) => a - b));

describe("GET /infecte2/get-all-infectes", () => {
  it("when players have statistics, then every row with exactly its fields, integers and a boolean, ordered by playerId", async () => {
    const [a, b] = [await makePlayer(prisma()), await makePlayer(prisma())];
    await prisma().infectedStats.create({ data: { playerId: b.id, kill: 5, winZ: 2, playtime: 3600, newPlayer: false } });
    await prisma().infectedStats.create({ data: { playerId: a.id } });
    const res = await get("/infecte2/get-all-infectes");
    expect(res.status).toBe(200);
    ascending(res.body.map((s: { playerId: number }) => s.playerId));
    const row = res.body.find((s: { playerId: number }) => s.playerId === b.id);
    expect(row).toEqual({
      playerId: b.id,
      kill: 5,
      assist: 0,
      death: 0,
      game: 0,
      eligibleGame: 0,
      winZ: 2,
      winH: 0,
      playtime: 3600,
      coin: 0,
      point: 0,
      objectif: 0,
      newPlayer: false,
    });
    expect(Object.keys(row)).toEqual([
      "playerId",
      "kill",
      "assist",
      "death",
      "game",
      "eligibleGame",
      "winZ",
      "winH",
      "playtime",
      "coin",
      "point",
      "objectif",
      "newPlayer",
    ]);
  });
});

describe("GET /temporary-item/get-active-items", () => {
  it("when items are past, current and future, then only startDate <= now < endDate, ids as strings, ordered by id", async () => {
    const hour = 3_600_000;
    const now = NOW.getTime();
    const make = (name: string, start: number, end: number) =>
      prisma().temporaryItem.create({
        data: { itemName: name, itemDescription: `${name} item`, price: 100, startDate: new Date(start), endDate: new Date(end) },
      });
    const startsNow = await make("starts-now", now, now + hour);
    const current = await make("current", now - hour, now + hour);
    await make("ended-now", now - hour, now);
    await make("expired", now - 2 * hour, now - hour);
    await make("future", now + 1000, now + hour);
    // Rewrite the first row so that the table's physical order is no longer id order.
    await prisma().temporaryItem.update({ where: { id: startsNow.id }, data: { price: 120 } });
    const res = await get("/temporary-item/get-active-items");
    expect(res.status).toBe(200);
    expect(res.body.map((i: { itemName: string }) => i.itemName)).toEqual(["starts-now", "current"]);
    expect(res.body[1]).toEqual({
      id: String(current.id),
      itemName: "current",
      itemDescription: "current item",
      price: 100,
      startDate: "2026-11-22T11:00:00Z",
      endDate: "2026-11-22T13:00:00Z",
    });
    expect(res.body[0].id).toBe(String(startsNow.id));
  });
});

describe("GET /parkour/get-all-maps", () => {
  it("when maps exist, then all of them with exactly their fields, nulls as null, ordered by id", async () => {
    const b = await prisma().parkourMap.create({ data: { name: "Sky run", enable: true, spawnLocation: "1,2,3,world,0,90", difficulty: "hard" } });
    const a = await prisma().parkourMap.create({ data: { name: "Easy start" } });
    // Rewrite the first row so that the table's physical order is no longer id order.
    await prisma().parkourMap.update({ where: { id: b.id }, data: { enable: false } });
    const res = await get("/parkour/get-all-maps");
    expect(res.status).toBe(200);
    ascending(res.body.map((m: { id: number }) => m.id));
    expect(res.body).toEqual([
      { id: b.id, name: "Sky run", enable: false, spawnLocation: "1,2,3,world,0,90", difficulty: "hard" },
      { id: a.id, name: "Easy start", enable: true, spawnLocation: null, difficulty: null },
    ]);
  });
});

describe("the list routes", () => {
  it.each(["/infecte2/get-all-infectes", "/temporary-item/get-active-items", "/parkour/get-all-maps"])(
    "when %s gets a query parameter, then 400 naming it",
    async (path) => {
      const res = await request(t.url).get(`/api${path}`).query({ page: "2" }).set("X-API-Key", key);
      expect(res.body).toEqual({ code: 400, message: "page: unknown field" });
    },
  );
});
