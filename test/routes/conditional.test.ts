import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_ROWS, readAll } from "../../src/db/list-query.js";
import { infectedStats } from "../../src/entities/infected.js";
import { parkourMap } from "../../src/entities/parkour.js";
import { player, playerSummary } from "../../src/entities/player.js";
import { temporaryItem } from "../../src/entities/temporary-item.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { allInfectedStats } from "../../src/resources/infected/queries.js";
import { allMaps } from "../../src/resources/parkour/queries.js";
import { allPlayers, fullPlayers } from "../../src/resources/player/queries.js";
import { activeAt, allItems } from "../../src/resources/temporary-item/queries.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { makeCosmetic, makePlayer, unique } from "../helpers/fixtures.js";

let t: TestApp;
let key: string;
let now = new Date("2026-11-22T12:00:00Z");
beforeAll(async () => {
  t = await startTestApp({ now: () => now });
  key = await t.key("user-A");
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const get = (path: string, headers: Record<string, string> = {}) =>
  request(t.url)
    .get(`/api${path}`)
    .set({ "X-API-Key": key, ...headers });

/** A list read as the service reads it, in batches of 2 rows: several batches make the bytes one query would. */
const allPlayersJson = (db: ReturnType<typeof prisma>) => readAll(db, allPlayers, ALL_ROWS, 2);
const playersByGradeJson = (db: ReturnType<typeof prisma>, gradeId: number) => readAll(db, fullPlayers, Prisma.sql`t."gradeId" = ${gradeId}`, 2);
const allInfectedStatsJson = (db: ReturnType<typeof prisma>) => readAll(db, allInfectedStats, ALL_ROWS, 2);
const allMapsJson = (db: ReturnType<typeof prisma>) => readAll(db, allMaps, ALL_ROWS, 2);
const activeItemsJson = (db: ReturnType<typeof prisma>, at: Date) => readAll(db, allItems, activeAt(at), 2);

describe("lists serialised by PostgreSQL", () => {
  it("when values hold quotes, backslashes, control characters, emoji and fractions, then the bytes equal JSON.stringify's", async () => {
    const awkward = ['quote " and \\ backslash', "tab\tnew\nline\r\u0001\u001f", "émoji 🎮 ünïcödé", "</script>", "\u007f\u2028"];
    for (const [i, text] of awkward.entries()) {
      await makePlayer(prisma(), {
        gradeId: 4242,
        nickname: unique("n"),
        tag: text,
        color: text.slice(0, 30),
        chatId: null,
        totalTimeConnection: [0.1, 1 / 3, 12.5, 0, 123456789.125][i]!,
        firstConnection: new Date(Date.UTC(2025, i, 1, 2, 3, 4)),
      });
    }
    await prisma().infectedStats.create({ data: { playerId: (await makePlayer(prisma())).id, kill: 7, newPlayer: false } });

    const summaries = await prisma().player.findMany({ orderBy: { id: "asc" } });
    expect(await allPlayersJson(prisma())).toBe(JSON.stringify(summaries.map((p) => playerSummary.toJson(p))));
    const graded = await prisma().player.findMany({ where: { gradeId: 4242 }, orderBy: { id: "asc" } });
    expect(await playersByGradeJson(prisma(), 4242)).toBe(JSON.stringify(graded.map((p) => player.full.toJson(p))));
    expect(await playersByGradeJson(prisma(), 987654)).toBe("[]");
    const stats = await prisma().infectedStats.findMany({ orderBy: { playerId: "asc" } });
    expect(await allInfectedStatsJson(prisma())).toBe(JSON.stringify(stats.map((s) => infectedStats.full.toJson(s))));

    for (const [i, text] of awkward.entries()) {
      await prisma().parkourMap.create({ data: { name: text.slice(0, 60), enable: i % 2 === 0, spawnLocation: text, difficulty: i ? null : "hard" } });
      await prisma().temporaryItem.create({
        data: { itemName: text, itemDescription: text, price: i, startDate: new Date(Date.UTC(2026, 10, i + 1)), endDate: new Date(Date.UTC(2027, 0, 1)) },
      });
    }
    const maps = await prisma().parkourMap.findMany({ orderBy: { id: "asc" } });
    expect(await allMapsJson(prisma())).toBe(JSON.stringify(maps.map((m) => parkourMap.full.toJson(m))));
    const at = new Date("2026-11-22T12:00:00Z");
    const items = await prisma().temporaryItem.findMany({ where: { startDate: { lte: at }, endDate: { gt: at } }, orderBy: { id: "asc" } });
    expect(items.length).toBe(awkward.length);
    expect(await activeItemsJson(prisma(), at)).toBe(JSON.stringify(items.map((t) => temporaryItem.full.toJson(t))));
  });
});

describe("conditional GETs", () => {
  it.each([
    ["/player/get-all-players", () => makePlayer(prisma())],
    ["/player/get-all-full-players-by-gradeId?gradeId=5", () => makePlayer(prisma(), { gradeId: 5 })],
    ["/infecte2/get-all-infectes", async () => prisma().infectedStats.create({ data: { playerId: (await makePlayer(prisma())).id } })],
    ["/parkour/get-all-maps", () => prisma().parkourMap.create({ data: { name: unique("m") } })],
  ])("when %s is asked again with its ETag, then 304 without a body; after a change, 200 with a new ETag", async (path, change) => {
    const first = await get(path);
    expect(first.status).toBe(200);
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[\w.-]+"$/);

    const again = await get(path, { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.etag).toBe(etag);
    expect((await get(path, { "If-None-Match": `"other", W/${etag}` })).status).toBe(304);
    expect((await get(path, { "If-None-Match": "*" })).status).toBe(304);
    expect((await get(path, { "If-None-Match": '"stale"' })).status).toBe(200);

    await change();
    const changed = await get(path, { "If-None-Match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body).toEqual((await get(path)).body);
  });

  it("when a cosmetic is updated, then its ETag changes and the old one gets the new body", async () => {
    const c = await makeCosmetic(prisma());
    const first = await get(`/cosmetic/get-cosmetic?id=${c.id}`);
    expect((await get(`/cosmetic/get-cosmetic?id=${c.id}`, { "If-None-Match": first.headers.etag! })).status).toBe(304);
    await request(t.url).patch("/api/cosmetic/update-cosmetic").set("X-API-Key", key).send({ id: c.id, price: 1 });
    const after = await get(`/cosmetic/get-cosmetic?id=${c.id}`, { "If-None-Match": first.headers.etag! });
    expect(after.status).toBe(200);
    expect(after.body.price).toBe(1);
  });

  it("when now crosses an item's start or end, then the active items' ETag changes with the set", async () => {
    now = new Date("2026-11-22T12:00:00Z");
    await prisma().temporaryItem.create({
      data: { itemName: "Noon sale", itemDescription: "", price: 1, startDate: new Date("2026-11-22T12:30:00Z"), endDate: new Date("2026-11-22T13:00:00Z") },
    });
    const before = await get("/temporary-item/get-active-items");
    expect((await get("/temporary-item/get-active-items", { "If-None-Match": before.headers.etag! })).status).toBe(304);
    now = new Date("2026-11-22T12:30:00Z");
    const during = await get("/temporary-item/get-active-items", { "If-None-Match": before.headers.etag! });
    expect(during.status).toBe(200);
    expect(during.body.map((i: { itemName: string }) => i.itemName)).toContain("Noon sale");
    now = new Date("2026-11-22T13:00:00Z");
    const after = await get("/temporary-item/get-active-items", { "If-None-Match": during.headers.etag! });
    expect(after.status).toBe(200);
    expect(after.body.map((i: { itemName: string }) => i.itemName)).not.toContain("Noon sale");
  });

  it("when a caller without rights sends a matching ETag, then 403 still comes first", async () => {
    const etag = (await get("/parkour/get-all-maps")).headers.etag!;
    const res = await request(t.url)
      .get("/api/parkour/get-all-maps")
      .set({ "X-API-Key": await t.key("user-D"), "If-None-Match": etag });
    expect(res.status).toBe(403);
  });
});
