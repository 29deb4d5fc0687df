import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announce, ensurePeriods } from "../src/leaderboards/periods.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer, unique } from "./helpers/fixtures.js";

/**
 * Leaderboards (issue 52, docs/CALLING.md "Leaderboards"): the top, a rank and the players around one, by
 * every statistic, all-time and for a day, a week, a month or a season; ties share a rank and are ordered
 * by player id; a period's board holds what each player gained in it, counted as the statistics change.
 */
let t: TestApp;
let keyA: string;
let keyD: string;
let keyC: string;
const prisma = () => t.database.db.prisma;

beforeAll(async () => {
  t = await startTestApp();
  [keyA, keyC, keyD] = [await t.key("user-A"), await t.key("user-C"), await t.key("user-D")];
});
afterAll(() => t.close());

const get = (path: string, key = keyD) => request(t.url).get(`/api${path}`).set("X-API-Key", key);
const post = (path: string, body: object) => request(t.url).post(`/api${path}`).set("X-API-Key", keyA).send(body);
const board = (query: string) => get(`/infecte2/get-leaderboard?${query}`);
const names = (entries: { rank: number; playerId: number; value: number }[]) => entries.map((e) => [e.rank, e.playerId, e.value]);

/** Players with these values of `coin` (a statistic no other test of this file writes), in id order. */
async function withCoins(values: number[]) {
  const players = [];
  for (const coin of values) {
    const p = await makePlayer(prisma(), { pseudo: unique("P") });
    await prisma().infectedStats.create({ data: { playerId: p.id, coin } });
    players.push(p);
  }
  return players;
}
const addKills = (playerId: number, kills: number) => prisma().$executeRaw`UPDATE infected_stats SET kill = kill + ${kills} WHERE "playerId" = ${playerId}`;

describe("the all-time board", () => {
  it("when players tie, then they share a rank (1, 2, 2, 4), ordered by id; a rank and the players around follow the same order", async () => {
    const [a, b, c, d] = await withCoins([1_000_010, 1_000_007, 1_000_007, 1_000_003]);
    const top = await board("stat=coin&limit=4");
    expect(top.status).toBe(200);
    expect(top.body).toMatchObject({ stat: "coin", period: null });
    expect(names(top.body.entries)).toEqual([
      [1, a!.id, 1_000_010],
      [2, b!.id, 1_000_007],
      [2, c!.id, 1_000_007],
      [4, d!.id, 1_000_003],
    ]);
    expect(top.body.entries[0].pseudo).toBe(a!.pseudo);

    const rank = await get(`/infecte2/get-leaderboard-rank?stat=coin&playerId=${c!.id}`);
    expect(rank.body.entry).toEqual({ rank: 2, playerId: c!.id, pseudo: c!.pseudo, value: 1_000_007 });
    const around = await get(`/infecte2/get-leaderboard-around?stat=coin&playerId=${c!.id}&k=1`);
    expect(names(around.body.entries)).toEqual([
      [2, b!.id, 1_000_007],
      [2, c!.id, 1_000_007],
      [4, d!.id, 1_000_003],
    ]);
    const atTop = await get(`/infecte2/get-leaderboard-around?stat=coin&playerId=${a!.id}&k=2`);
    expect(names(atTop.body.entries)).toEqual([
      [1, a!.id, 1_000_010],
      [2, b!.id, 1_000_007],
      [2, c!.id, 1_000_007],
    ]);
  });

  it("when the board is asked again unchanged, then 304; once a statistic changes, then 200 with the new order", async () => {
    const [a, b] = await withCoins([2_000_002, 2_000_001]);
    const first = await board("stat=coin&limit=2");
    expect((await board("stat=coin&limit=2").set("If-None-Match", first.headers.etag as string)).status).toBe(304);
    await prisma().$executeRaw`UPDATE infected_stats SET coin = 2000005 WHERE "playerId" = ${b!.id}`;
    const after = await board("stat=coin&limit=2").set("If-None-Match", first.headers.etag as string);
    expect(after.status).toBe(200);
    expect(names(after.body.entries)).toEqual([
      [1, b!.id, 2_000_005],
      [2, a!.id, 2_000_002],
    ]);
  });

  it("when the input is wrong, then a 400 naming what is accepted; a player without statistics, 404; group C, 403", async () => {
    const stat = await board("stat=kills");
    expect([stat.status, stat.body.message]).toEqual([
      400,
      expect.stringContaining("stat: expected one of kill, assist, death, game, eligibleGame, winZ, winH, playtime, coin, point, objectif"),
    ]);
    expect((await board("stat=kill&period=year")).body.message).toContain("period: expected one of all, day, week, month, season");
    expect((await board("stat=kill&limit=101")).body.message).toContain("limit: expected at most 100");
    expect((await board("stat=kill&limit=0")).status).toBe(400);
    const player = await makePlayer(prisma());
    expect((await get(`/infecte2/get-leaderboard-around?stat=kill&playerId=${player.id}&k=-1`)).body.message).toContain("k: expected 0 or more");
    const none = await get(`/infecte2/get-leaderboard-rank?stat=kill&playerId=${player.id}`);
    expect([none.status, none.body.message]).toEqual([404, `Player ${player.id} has no kill on this board`]);
    expect((await board("stat=kill&season=x")).body.message).toBe("season: only with period=season");
    expect((await board("stat=kill").set("X-API-Key", keyC)).status).toBe(403);
  });
});

describe("a period's board", () => {
  it("when statistics change during the week, then its board ranks what each player gained, not their totals, and names the period", async () => {
    await ensurePeriods(prisma(), "UTC");
    const [a, b, c] = await withCoins([0, 0, 0]);
    // Totals before the week's gains: c leads all-time, a gains the most this week.
    await prisma().$executeRaw`UPDATE infected_stats SET kill = 500 WHERE "playerId" = ${c!.id}`;
    await addKills(a!.id, 9);
    await addKills(b!.id, 4);
    await addKills(a!.id, 1);
    const week = await board(`stat=kill&period=week&limit=100`);
    expect(week.status).toBe(200);
    const ours = week.body.entries.filter((e: { playerId: number }) => [a!.id, b!.id, c!.id].includes(e.playerId));
    expect(ours.map((e: { playerId: number; value: number }) => [e.playerId, e.value])).toEqual([
      [c!.id, 500],
      [a!.id, 10],
      [b!.id, 4],
    ]);
    expect(week.body.period).toMatchObject({ kind: "week", key: expect.stringMatching(/^\d{4}-W\d\d$/), ended: false });
    expect(Date.parse(week.body.period.endsAt) - Date.parse(week.body.period.startsAt)).toBe(7 * 86_400_000);
    expect(new Date(week.body.period.startsAt).getUTCDay()).toBe(1);
    const rank = await get(`/infecte2/get-leaderboard-rank?stat=kill&period=day&playerId=${b!.id}`);
    expect(rank.body.entry).toMatchObject({ playerId: b!.id, value: 4 });
  });

  it("when a period was made after its start (the service was down across the boundary), then it counts from then and says so", async () => {
    await prisma().$executeRaw`DELETE FROM leaderboard_periods WHERE kind = 'month' AND "startsAt" <= now() AND now() < "endsAt"`;
    const none = await board("stat=kill&period=month");
    expect([none.status, none.body.message]).toEqual([404, "The current month not found"]);
    expect(await ensurePeriods(prisma(), "UTC")).toBe(1);
    const month = await board("stat=kill&period=month");
    expect(Date.parse(month.body.period.countedFrom)).toBeGreaterThan(Date.parse(month.body.period.startsAt));
  });

  it("when a past period is named by its key, then its board; one never made, a 400 naming the format", async () => {
    const day = (await board("stat=kill&period=day")).body.period.key as string;
    expect((await board(`stat=kill&period=day&key=${day}`)).body.period.key).toBe(day);
    const missing = await board("stat=kill&period=week&key=1999-W01");
    expect([missing.status, missing.body.message]).toEqual([400, "key: no week '1999-W01' on record (a week is 2026-W49 (ISO))"]);
    expect((await board("stat=kill&key=2026-12")).body.message).toBe("key: only with period=day, week or month");
  });
});

describe("seasons", () => {
  it("when an admin starts a season, then its board counts gains from then; started twice or ended before it began, refused, nothing changed", async () => {
    const name = unique("winter-");
    const started = await post("/admin/seasons/start", { name });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ kind: "season", key: name, endsAt: null, ended: false });
    const again = await post("/admin/seasons/start", { name });
    expect([again.status, again.body.message]).toEqual([409, expect.stringMatching(new RegExp(`^Season '${name}' already exists .*: nothing changed$`))]);

    const [p] = await withCoins([0]);
    await addKills(p!.id, 3);
    const season = await board(`stat=kill&period=season&season=${name}`);
    expect(names(season.body.entries)).toEqual([[1, p!.id, 3]]);

    const early = await post("/admin/seasons/end", { name, endsAt: "2000-01-01T00:00:00Z" });
    expect([early.status, early.body.message]).toEqual([400, expect.stringMatching(/^endsAt: not after the season's start/)]);
    const later = unique("spring-");
    expect((await post("/admin/seasons/start", { name: later, startsAt: "2999-01-01T00:00:00Z" })).status).toBe(201);
    const notBegun = await board(`stat=kill&period=season&season=${later}`);
    expect([notBegun.status, notBegun.body.message]).toEqual([400, `season: '${later}' has not begun yet (it begins 2999-01-01T00:00:00.000Z)`]);
    const unknown = await board("stat=kill&period=season&season=nope");
    expect(unknown.body.message).toMatch(new RegExp(`^season: no season 'nope'; the seasons: .*${name}`));
    expect((await post("/admin/seasons/start", { name: unique("past-"), startsAt: "2000-01-01T00:00:00Z" })).status).toBe(400);

    const ended = await post("/admin/seasons/end", { name });
    expect(ended.body).toMatchObject({ key: name, ended: true });
    await addKills(p!.id, 50);
    expect(names((await board(`stat=kill&period=season&season=${name}`)).body.entries)).toEqual([[1, p!.id, 3]]);
    expect((await post("/admin/seasons/end", { name })).status).toBe(409);
    const listed = await get("/admin/seasons", keyA);
    expect(listed.body.seasons.map((s: { key: string }) => s.key)).toEqual(expect.arrayContaining([name, later]));
  });

  it("when a period begins and a season ends, then each is announced once, the season's end with its final top", async () => {
    const name = unique("summer-");
    expect((await post("/admin/seasons/start", { name })).status).toBe(201);
    const [p] = await withCoins([0]);
    await addKills(p!.id, 7);
    expect((await post("/admin/seasons/end", { name })).status).toBe(200);
    // Two instances at once (on PostgreSQL, two connections of the pool): each announcement is written by one.
    await Promise.all([announce(prisma()), announce(prisma())]);
    expect(await announce(prisma())).toBe(0);
    const events = await prisma().webhookEvent.findMany({ where: { type: { in: ["season.ended", "leaderboard.period_started"] } } });
    const endedEvents = events.filter((e) => e.type === "season.ended" && JSON.parse(e.data).key === name);
    expect(endedEvents).toHaveLength(1);
    expect(JSON.parse(endedEvents[0]!.data)).toMatchObject({ kind: "season", key: name, ended: true, top: { kill: [{ rank: 1, playerId: p!.id, value: 7 }] } });
    const starts = events.filter((e) => e.type === "leaderboard.period_started").map((e) => JSON.parse(e.data) as { kind: string; key: string });
    expect(starts.map((s) => s.kind)).toEqual(expect.arrayContaining(["day", "week", "month"]));
    expect(new Set(starts.map((s) => `${s.kind}:${s.key}`)).size).toBe(starts.length);
  });
});

describe("season at the command line", () => {
  it("when the operator starts, lists and ends a season, then each is one line; a bad name or a second start, one line and nothing changed", async () => {
    const { runCli } = await import("../src/cli/cli.js");
    const { loadConfig } = await import("../src/core/config.js");
    const { createLogger } = await import("../src/core/logger.js");
    const cli = async (argv: string[]) => {
      let stdout = "";
      let stderr = "";
      const code = await runCli(
        argv,
        { config: loadConfig({ NODE_ENV: "test" }), db: t.database.db, logger: createLogger("silent") },
        { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) },
      );
      return { code, stdout, stderr };
    };
    const name = unique("cli-season-");
    const started = await cli(["season", "start", name, "--ends-at", "2999-01-01T00:00:00Z"]);
    expect([started.code, started.stdout]).toEqual([
      0,
      expect.stringMatching(new RegExp(`^Started\\. Season '${name}': from \\S+Z to 2999-01-01T00:00:00.000Z\\.\\n$`)),
    ]);
    expect((await cli(["season", "list"])).stdout).toContain(name);
    const twice = await cli(["season", "start", name]);
    expect([twice.code, twice.stderr]).toEqual([1, expect.stringMatching(/already exists .*: nothing changed\n$/)]);
    expect((await cli(["season", "start", "-bad"])).code).not.toBe(0);
    expect((await cli(["season", "start", "no/slash"])).stderr).toContain("Invalid season name 'no/slash'");
    const ended = await cli(["season", "end", name]);
    expect([ended.code, ended.stdout]).toEqual([0, expect.stringMatching(/^Ended\. .*\(ended\)\.\n$/)]);
    expect(await prisma().auditLog.count({ where: { target: `season:${name}` } })).toBe(2);
  });
});

describe("the TypeScript client", () => {
  it("when a hologram polls a board with EtagPoller, then it is told of a change only when the board changes", async () => {
    const { createApiClient, EtagPoller } = await import("../clients/typescript/src/index.js");
    const api = createApiClient({ baseUrl: `${t.url}/api`, apiKey: keyD });
    const [p] = await withCoins([3_000_000]);
    const top = new EtagPoller(api, "/infecte2/get-leaderboard", { stat: "coin", limit: 1 });
    const first = await top.poll();
    expect(first.changed && first.data.entries[0]).toMatchObject({ rank: 1, playerId: p!.id, value: 3_000_000 });
    expect((await top.poll()).changed).toBe(false);
    await prisma().$executeRaw`UPDATE infected_stats SET coin = 3000001 WHERE "playerId" = ${p!.id}`;
    const next = await top.poll();
    expect(next.changed && next.data.entries[0]!.value).toBe(3_000_001);
  });
});

describe("ranks from the counted values", () => {
  it("when a statistic changes, then the next rank counts it (the counts are kept per version of the statistics)", async () => {
    const [a, b] = await withCoins([4_000_001, 4_000_000]);
    const rankOfB = async () => (await get(`/infecte2/get-leaderboard-rank?stat=coin&playerId=${b!.id}`)).body.entry.rank as number;
    const before = await rankOfB();
    await prisma().$executeRaw`UPDATE infected_stats SET coin = 3999999 WHERE "playerId" = ${a!.id}`;
    expect(await rankOfB()).toBe(before - 1);
  });

  it("when a board has more distinct values than are kept, then it is not counted here (the caller counts in the index)", async () => {
    const { rowsAbove } = await import("../src/leaderboards/value-counts.js");
    const { Prisma } = await import("../src/generated/prisma/client.js");
    await withCoins([5_000_003, 5_000_002, 5_000_002]);
    const from = Prisma.sql`SELECT coin AS value FROM infected_stats`;
    const where = Prisma.sql`coin >= 5000000`;
    expect(await rowsAbove(prisma(), unique("b"), from, where, 5_000_002)).toBe(1);
    expect(await rowsAbove(prisma(), unique("b"), from, where, 4_999_999)).toBe(3);
    expect(await rowsAbove(prisma(), unique("b"), from, where, 5_000_002, 1)).toBeUndefined();
  });
});
