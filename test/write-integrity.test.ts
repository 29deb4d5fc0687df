import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImportError, importData } from "../src/transfer/transfer.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";

/**
 * Writes that must not be refused or deadlock because of what another
 * transaction does meanwhile: an insert in flight across an import, rows
 * written past an id sequence, two transactions writing the same players in
 * opposite order.
 */
let t: TestApp;
let key: string;
let players: number[];
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
  players = [(await makePlayer(prisma())).id, (await makePlayer(prisma())).id];
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
let reward = 1000;

function createRewardLog(playerId: number, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/api/website/create-reward-log`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ playerId, rewardId: reward++ }),
  });
}

async function created(res: Response): Promise<{ id: number }> {
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number };
}

const nextId = async () =>
  Number((await prisma().$queryRawUnsafe<{ id: bigint }[]>(`SELECT nextval(pg_get_serial_sequence('reward_logs', 'id')) AS id`))[0]!.id);
const rewardLogFile = (id: number) => ({ rewardLogs: [{ id, playerId: players[0], rewardId: 7000 + id, rewardedAt: "2026-01-01T00:00:00Z" }] });

describe("id sequences never move back", () => {
  it("when an insert drew its id before an import of lower ids and commits after it, then the next create-reward-log is stored, not 409", async () => {
    const first = await created(await createRewardLog(players[0]!));
    if (onPostgres) {
      // The reproduction: a transaction holds an inserted reward log, uncommitted, across the import.
      const held = new pg.Client({ connectionString: t.database.url });
      await held.connect();
      try {
        await held.query("BEGIN");
        const { rows } = await held.query<{ id: number }>(
          `INSERT INTO reward_logs ("playerId", "rewardId", "rewardedAt") VALUES ($1, 200, now()) RETURNING id`,
          [players[1]],
        );
        expect(rows[0]!.id).toBeGreaterThan(first.id);
        await importData(prisma(), rewardLogFile(first.id));
        await held.query("COMMIT");
      } finally {
        await held.end();
      }
    } else {
      // PGlite has one connection, so nothing stays open across the import: the insert's two steps, drawing
      // its id and committing its row, are taken apart around it instead.
      const drawn = await nextId();
      await importData(prisma(), rewardLogFile(first.id));
      await prisma().$executeRawUnsafe(`INSERT INTO reward_logs (id, "playerId", "rewardId", "rewardedAt") VALUES (${drawn}, ${players[1]}, 200, now())`);
    }
    const later = await created(await createRewardLog(players[0]!));
    expect(later.id).toBeGreaterThan(first.id + 1);
  });

  it("when an import holds ids past the sequence, then it moves the sequence past them before writing", async () => {
    const ahead = (await nextId()) + 50;
    await importData(prisma(), rewardLogFile(ahead));
    expect((await created(await createRewardLog(players[1]!))).id).toBe(ahead + 1);
  });
});

describe("an import cannot use up an id sequence", () => {
  it("when an import gives the largest id its column holds, then it is refused naming the entry and the limit, and create-reward-log still answers 201", async () => {
    const topLog = (id: number) => ({ rewardLogs: [{ id, playerId: players[0], rewardId: 1, rewardedAt: `2026-02-0${(id % 7) + 1}T00:00:00Z` }] });
    const refused = await importData(prisma(), topLog(2147483647)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ImportError);
    expect((refused as ImportError).problems).toEqual([
      "rewardLogs[0].id: 2147483647 is past 1073741823, the largest id an import may give " +
        "(half of what the id sequence holds: the other half stays for records created through the API)",
    ]);
    await created(await createRewardLog(players[0]!));
    // At the limit, the import is taken, and the API goes on past it.
    await importData(prisma(), topLog(1073741823));
    expect((await created(await createRewardLog(players[1]!))).id).toBe(1073741824);
  });
});

describe("a 409 on create-reward-log means that reward is already recorded, nothing else", () => {
  it("when the id the sequence draws was already written by hand, then the reward is stored under a fresh id (201)", async () => {
    const taken = (await nextId()) + 1;
    await prisma().$executeRawUnsafe(`INSERT INTO reward_logs (id, "playerId", "rewardId", "rewardedAt") VALUES (${taken}, ${players[0]}, 1, now())`);
    const log = await created(await createRewardLog(players[1]!));
    expect(log.id).toBeGreaterThan(taken);
    expect(await prisma().rewardLog.count({ where: { id: log.id, playerId: players[1] } })).toBe(1);
  });

  it("when it happens to a request sent with an Idempotency-Key, then it is stored once and the replay answers the same", async () => {
    const taken = (await nextId()) + 1;
    await prisma().$executeRawUnsafe(`INSERT INTO reward_logs (id, "playerId", "rewardId", "rewardedAt") VALUES (${taken}, ${players[0]}, 2, now())`);
    const body = JSON.stringify({ playerId: players[1], rewardId: 4242 });
    const send = () =>
      fetch(`${t.url}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": key, "Content-Type": "application/json", "Idempotency-Key": "fresh-id-after-collision" },
        body,
      });
    const first = await created(await send());
    expect(first.id).toBeGreaterThan(taken);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(await replay.json()).toEqual(first);
    expect(await prisma().rewardLog.count({ where: { rewardId: 4242 } })).toBe(1);
  });

  it("when the same player, reward and moment are sent twice, then the second is 409 already recorded", async () => {
    const body = JSON.stringify({ playerId: players[0], rewardId: 31337, rewardedAt: "2026-11-25T10:00:00Z" });
    const send = () =>
      fetch(`${t.url}/api/website/create-reward-log`, { method: "POST", headers: { "X-API-Key": key, "Content-Type": "application/json" }, body });
    await created(await send());
    const again = await send();
    expect(again.status).toBe(409);
    expect(((await again.json()) as { message: string }).message).toMatch(/is already recorded \(unique constraint reward_logs_player_reward_time_key\)$/);
  });

  it("when a form answer's id was already written by hand, then it too is stored under a fresh id", async () => {
    const next = Number((await prisma().$queryRawUnsafe<{ id: bigint }[]>(`SELECT nextval(pg_get_serial_sequence('form_answers', 'id')) AS id`))[0]!.id);
    const answer = { playerId: players[0], video: "https://video.example/x", question1: "a", question2: "b", question3: "c", question4: "d", question5: "e" };
    await prisma().formAnswer.create({ data: { ...answer, id: next + 1, playerId: players[0]! } });
    const res = await fetch(`${t.url}/api/form/create-form`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify(answer),
    });
    expect((await created(res)).id).toBeGreaterThan(next + 1);
  });
});

describe.runIf(onPostgres)("two transactions writing the same players in opposite order (PostgreSQL: PGlite runs one transaction at a time)", () => {
  it("when each updates two players in separate statements, in opposite order, then both commit: no deadlock", async () => {
    const [a, b] = players as [number, number];
    const one = new pg.Client({ connectionString: t.database.url });
    const two = new pg.Client({ connectionString: t.database.url });
    await Promise.all([one.connect(), two.connect()]);
    try {
      const bump = (client: pg.Client, id: number) => client.query(`UPDATE players SET credit = credit + 1 WHERE id = $1`, [id]);
      const before = await prisma().player.findMany({ where: { id: { in: [a, b] } }, orderBy: { id: "asc" } });
      await one.query("BEGIN");
      await two.query("BEGIN");
      await bump(one, a);
      // Waits for the first transaction (on the players' version row), holding no player meanwhile.
      const second = bump(two, b).then(() => bump(two, a));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await bump(one, b);
      await one.query("COMMIT");
      await second;
      await two.query("COMMIT");
      const after = await prisma().player.findMany({ where: { id: { in: [a, b] } }, orderBy: { id: "asc" } });
      expect(after.map((p) => p.credit)).toEqual(before.map((p) => p.credit + 2));
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
  });
});
