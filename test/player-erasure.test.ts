import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient, ListSync } from "../clients/typescript/src/index.js";
import { runCli } from "../src/cli/cli.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import type { Database } from "../src/db/database.js";
import { ensurePeriods } from "../src/leaderboards/periods.js";
import { erasePlayer } from "../src/privacy/erasure.js";
import { readLedger } from "../src/privacy/ledger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, lockWaited, onPostgres } from "./helpers/database.js";
import { makePlayer, makeWorld, unique } from "./helpers/fixtures.js";

/**
 * A player erased (issue 51): POST /api/admin/players/erase, group A. Their rows deleted, every copy scrubbed
 * (audit values, events, deliveries' answers, stored idempotent answers), a receipt listed and in the ledger;
 * lists, syncs and exports follow; a restore of a backup made before re-applies it.
 */
const dir = mkdtempSync(path.join(tmpdir(), "erasure-"));
const ledger = path.join(dir, "erasures.jsonl");
let t: TestApp;
let keyA: string;
let keyB: string;
const answers = { video: "https://video.example/v/1", question1: "my secret answer", question2: "a2", question3: "a3", question4: "a4", question5: "a5" };

beforeAll(async () => {
  t = await startTestApp({ env: { ERASURE_LEDGER: ledger } });
  keyA = await t.key("user-A");
  keyB = await t.key("user-B");
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (key: string, p: string, body: object) => request(t.url).post(`/api${p}`).set("X-API-Key", key).send(body);
const erase = (body: object, key = keyA) => post(key, "/admin/players/erase", body);

async function cli(db: Database, argv: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const config = loadConfig({ NODE_ENV: "test", ERASURE_LEDGER: ledger, ...env });
  const code = await runCli(argv, { config, db, logger: createLogger("silent") }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** A player with a row of every kind, written through the API where it can be (audit entries, events, a stored answer). */
async function community() {
  const prisma = t.database.db.prisma;
  const steve = await makePlayer(prisma, { pseudo: unique("Steve"), ip: "198.51.100.7", chatId: "chat-7" });
  const other = await makePlayer(prisma, { pseudo: unique("Alex") });
  await ensurePeriods(prisma, "UTC"); // this day, week and month count the statistics' gains: 3 leaderboard rows
  await prisma.infectedStats.create({ data: { playerId: steve.id, kill: 12 } });
  const world = await makeWorld(prisma, { ownerId: steve.id });
  expect((await request(t.url).patch("/api/freebuild/update-world").set("X-API-Key", keyB).send({ id: world.id, tag: "castle" })).status).toBe(200);
  for (const p of [steve, other]) {
    expect((await post(keyB, "/website/create-reward-log", { playerId: p.id, rewardId: 42 })).status).toBe(201);
    expect((await post(keyB, "/form/create-form", { playerId: p.id, ...answers })).status).toBe(201);
  }
  const storedKey = unique("k");
  const stored = await request(t.url)
    .post("/api/website/create-reward-log")
    .set("X-API-Key", keyB)
    .set("Idempotency-Key", storedKey)
    .send({ playerId: steve.id, rewardId: 7 });
  expect(stored.status).toBe(201);
  const form = await prisma.formAnswer.findFirstOrThrow({ where: { playerId: steve.id } });
  return { steve, other, world, storedKey, formTarget: `form_answer:${form.id}` };
}

describe("POST /api/admin/players/erase", () => {
  it("when group A erases a player by pseudo, then their rows go, every copy keeps the fact without the values, and a receipt is kept", async () => {
    const prisma = t.database.db.prisma;
    const { steve, other, storedKey, formTarget } = await community();
    const list = await request(t.url).get("/api/player/get-all-players").set("X-API-Key", keyA);
    const token = list.headers["sync-token"] as string;

    const res = await erase({ pseudo: steve.pseudo.toLowerCase() });
    expect(res.status).toBe(200);
    const receipt = res.body;
    expect(receipt).toEqual({
      id: expect.stringMatching(/^era_[0-9a-f]{32}$/),
      playerId: steve.id,
      erasedAt: expect.stringMatching(/Z$/),
      erasedBy: "user-A",
      removed: { player: 1, infectedStats: 1, leaderboards: 3, formAnswers: 1, rewardLogs: 2, worlds: 1 },
      scrubbed: expect.objectContaining({ auditEntries: 4, idempotentAnswers: 1 }),
    });

    // Their rows: gone; the other player's: all there.
    expect(await prisma.player.findUnique({ where: { id: steve.id } })).toBeNull();
    for (const count of [
      prisma.rewardLog.count({ where: { playerId: steve.id } }),
      prisma.formAnswer.count({ where: { playerId: steve.id } }),
      prisma.world.count({ where: { ownerId: steve.id } }),
      prisma.infectedStats.count({ where: { playerId: steve.id } }),
      prisma.leaderboardEntry.count({ where: { playerId: steve.id } }),
    ]) {
      expect(await count).toBe(0);
    }
    expect(await prisma.rewardLog.count({ where: { playerId: other.id } })).toBe(1);
    expect(await prisma.formAnswer.count({ where: { playerId: other.id } })).toBe(1);

    // No copy holds a value of theirs: not the pseudo, the address, the answers.
    const copies = JSON.stringify(
      [await prisma.auditLog.findMany(), await prisma.webhookEvent.findMany(), await prisma.idempotencyKey.findMany(), await prisma.webhookDelivery.findMany()],
      (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v),
    );
    for (const value of [steve.pseudo, "198.51.100.7", "chat-7"]) expect(copies).not.toContain(value);
    expect(copies).toContain("my secret answer"); // the other player's answers stay
    // The facts stay: the form's audit entry keeps its field names; its event its type, with the ids.
    const formEntry = await prisma.auditLog.findFirstOrThrow({ where: { action: "form.create", target: formTarget } });
    expect(formEntry.changes).toMatchObject({ playerId: null, question1: null });
    const events = await prisma.webhookEvent.findMany({ where: { data: { contains: receipt.id }, type: { not: "player.erased" } } });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["reward_log.created", "form.created", "world.updated"]));
    expect(events.every((e) => Object.keys(JSON.parse(e.data) as object).every((k) => ["id", "playerId", "ownerId", "erased"].includes(k)))).toBe(true);
    const erased = await prisma.webhookEvent.findFirst({ where: { type: "player.erased" }, orderBy: { id: "desc" } });
    expect(JSON.parse(erased!.data)).toEqual({ id: steve.id, erasure: receipt.id, erasedAt: receipt.erasedAt });
    expect(await prisma.auditLog.findFirst({ where: { action: "player.erase", target: `player:${steve.id}` } })).toMatchObject({ actor: "user-A" });

    // A resend of a stored request that named them: 410, not its first answer.
    const replay = await request(t.url)
      .post("/api/website/create-reward-log")
      .set("X-API-Key", keyB)
      .set("Idempotency-Key", storedKey)
      .send({ playerId: steve.id, rewardId: 7 });
    expect(replay.status).toBe(410);
    expect(replay.headers["error-name"]).toBe("PLAYER_ERASED");
    expect(replay.body.message).toContain(receipt.id);

    // Lists and syncs follow: gone from the list, the old token answered 410.
    const after = await request(t.url).get("/api/player/get-all-players").set("X-API-Key", keyA);
    expect(after.body.map((p: { id: number }) => p.id)).not.toContain(steve.id);
    expect(after.headers.etag).not.toBe(list.headers.etag);
    expect(
      (
        await request(t.url)
          .get(`/api/player/get-all-players?since=${encodeURIComponent(token)}`)
          .set("X-API-Key", keyA)
      ).status,
    ).toBe(410);

    // Listed, in the ledger, and final: by id 410 naming the receipt, by pseudo 404, export 410, a write naming them 409.
    const listed = await request(t.url).get(`/api/admin/players/erasures?playerId=${steve.id}`).set("X-API-Key", keyB);
    expect(listed.body).toEqual({ erasures: [receipt], nextCursor: null });
    expect(await readLedger(ledger)).toContainEqual(receipt);
    const again = await erase({ id: steve.id });
    expect([again.status, again.headers["error-name"], again.body.message]).toEqual([
      410,
      "PLAYER_ERASED",
      `Player ${steve.id} was erased at ${receipt.erasedAt} (receipt ${receipt.id}): nothing of theirs is left`,
    ]);
    expect((await erase({ pseudo: steve.pseudo })).status).toBe(404);
    expect((await post(keyA, "/admin/players/export", { id: steve.id })).status).toBe(410);
    const late = await post(keyB, "/website/create-reward-log", { playerId: steve.id, rewardId: 1 });
    expect([late.status, late.headers["error-name"]]).toEqual([409, "REFERENCE_NOT_FOUND"]);
  });

  it("when a client keeps the players by sync (TypeScript ListSync), then its next sync drops the erased player", async () => {
    const { steve, other } = await community();
    const players = new ListSync(createApiClient({ baseUrl: `${t.url}/api`, apiKey: keyA }), "/player/get-all-players", { key: (p) => p.id });
    await players.sync();
    expect(players.rows.has(steve.id)).toBe(true);
    expect((await erase({ id: steve.id })).status).toBe(200);
    expect((await players.sync()).full).toBe(true);
    expect(players.rows.has(steve.id)).toBe(false);
    expect(players.rows.has(other.id)).toBe(true);
  });

  it("when the ledger cannot be written, then nothing is erased", async () => {
    const prisma = t.database.db.prisma;
    const { steve } = await community();
    const broken = await startTestApp({ database: t.database, env: { ERASURE_LEDGER: dir } });
    try {
      const before = await prisma.auditLog.count();
      const res = await request(broken.url).post("/api/admin/players/erase").set("X-API-Key", keyA).send({ id: steve.id });
      expect(res.status).toBe(500);
      expect(await prisma.player.findUnique({ where: { id: steve.id } })).not.toBeNull();
      expect(await prisma.rewardLog.count({ where: { playerId: steve.id } })).toBe(2);
      expect(await prisma.auditLog.count()).toBe(before);
      expect(await prisma.playerErasure.count({ where: { playerId: steve.id } })).toBe(0);
    } finally {
      await broken.close();
    }
  });

  it("when a caller outside groups A and B, or a body naming no player or both, asks, then 403 and 400", async () => {
    const keyD = await t.key("user-D");
    expect((await erase({ id: 1 }, keyD)).status).toBe(403);
    expect((await erase({})).body).toEqual({ code: 400, message: "id, pseudo: send one of them" });
    expect((await erase({ id: 1, pseudo: "x" })).status).toBe(400);
    expect((await erase({ id: 2_147_483_647 })).body).toEqual({ code: 404, message: "Player not found" });
    expect((await request(t.url).get("/api/admin/players/erasures?cursor=nope").set("X-API-Key", keyA)).status).toBe(400);
  });
});

// PGlite runs one statement at a time: nothing runs beside an erasure there.
describe.skipIf(!onPostgres)("while an erasure runs", () => {
  it("when a write names the player, then it waits and is refused; when an export asks, then 409 at once", async () => {
    const prisma = t.database.db.prisma;
    const { steve } = await community();
    let exported: request.Response | undefined;
    let written: Promise<request.Response> | undefined;
    await prisma.$transaction(
      async (tx) => {
        await erasePlayer(tx, { id: steve.id }, { actor: "test" });
        exported = await post(keyA, "/admin/players/export", { id: steve.id });
        written = post(keyB, "/website/create-reward-log", { playerId: steve.id, rewardId: 3 }).then((r) => r);
        await lockWaited(t.database.db);
      },
      { timeout: 60_000 },
    );
    expect([exported!.status, exported!.body.message]).toEqual([409, `Player ${steve.id} is being erased: there is nothing to export`]);
    const write = await written!;
    expect([write.status, write.headers["error-name"]]).toEqual([409, "REFERENCE_NOT_FOUND"]);
    expect(await prisma.rewardLog.count({ where: { playerId: steve.id } })).toBe(0);
  });
});

describe("restore and the erasure ledger", () => {
  it("when a backup made before an erasure is restored into a new database, then the player is gone again, the receipt listed, and their id never given again", async () => {
    const { steve } = await community();
    const file = path.join(dir, "before.backup");
    expect((await cli(t.database.db, ["backup", file])).code).toBe(0);
    const receipt = (await erase({ id: steve.id })).body;

    const fresh = await createTestDatabase();
    try {
      // Checked first: --check names the erasure the file lacks, and writes nothing.
      const checked = await cli(fresh.db, ["restore", "--check", file]);
      expect(checked.code).toBe(0);
      expect(checked.stdout).toContain(
        `A restore would re-apply 1 erasure(s) the backup was made before: player ${steve.id} (${receipt.id}, ${receipt.erasedAt})`,
      );
      const restored = await cli(fresh.db, ["restore", file]);
      expect(restored.code).toBe(0);
      expect(restored.stdout).toContain(`Re-applied 1 erasure(s) the backup was made before: player ${steve.id} (${receipt.id}, ${receipt.erasedAt})`);
      expect(await fresh.db.prisma.player.findUnique({ where: { id: steve.id } })).toBeNull();
      expect(await fresh.db.prisma.rewardLog.count({ where: { playerId: steve.id } })).toBe(0);
      expect(await fresh.db.prisma.playerErasure.findUnique({ where: { id: receipt.id } })).toMatchObject({ playerId: steve.id, erasedBy: "user-A" });
      const events = JSON.stringify(await fresh.db.prisma.webhookEvent.findMany({ select: { data: true } }));
      expect(events).not.toContain(steve.pseudo);
      const listed = await cli(fresh.db, ["player", "erasures", "--json"]);
      expect(listed.stdout).toContain(receipt.id);
      const next = await fresh.db.prisma.player.create({ data: { pseudo: unique("new"), token: "t", ip: "" } });
      expect(next.id).toBeGreaterThan(steve.id);
    } finally {
      await fresh.drop();
    }
  });

  it("when the ledger has a damaged line, then restore refuses with its number and writes nothing", async () => {
    const file = path.join(dir, "any.backup");
    expect((await cli(t.database.db, ["backup", file])).code).toBe(0);
    const damaged = path.join(dir, "damaged", "erasures.jsonl");
    mkdirSync(path.dirname(damaged));
    writeFileSync(damaged, `${readFileSync(ledger, "utf8")}{"id":"era_x"}\n`);
    const fresh = await createTestDatabase();
    try {
      const refused = await cli(fresh.db, ["restore", file], { ERASURE_LEDGER: damaged });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/erasure ledger .* line \d+: not an erasure receipt/);
      expect(await fresh.db.prisma.player.count()).toBe(0);
    } finally {
      await fresh.drop();
    }
  });
});

describe("player export | erase | erasures at the command line", () => {
  it("when the operator exports then erases a player, then the export holds their rows, the erasure needs --yes and prints its receipt", async () => {
    const { steve } = await community();
    const exported = await cli(t.database.db, ["player", "export", "--id", String(steve.id)]);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ manifest: { player: { id: steve.id, pseudo: steve.pseudo }, counts: { rewardLogs: 2 } } });
    expect((await cli(t.database.db, ["player", "erase", "--id", String(steve.id)])).code).toBe(2);
    const erased = await cli(t.database.db, ["player", "erase", "--pseudo", steve.pseudo, "--yes"]);
    expect(erased.code).toBe(0);
    expect(erased.stdout).toMatch(
      new RegExp(
        `^Erased player ${steve.id}: receipt era_[0-9a-f]{32} at .*; removed 1 player, 1 infectedStats, 3 leaderboards, 1 formAnswers, 2 rewardLogs, 1 worlds; scrubbed`,
      ),
    );
    const again = await cli(t.database.db, ["player", "erase", "--id", String(steve.id), "--yes"]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining(`Player ${steve.id} was erased at`)]);
    expect((await cli(t.database.db, ["player", "export", "--pseudo", steve.pseudo])).stderr).toBe(`Player '${steve.pseudo}' not found\n`);
  });

  it("when an import holds an erased player's id (their export, re-imported), then it is refused, naming the receipt, and nothing is written", async () => {
    const { steve } = await community();
    const exported = await cli(t.database.db, ["export"]);
    const file = path.join(dir, "before-erasure.json");
    writeFileSync(file, exported.stdout);
    const receipt = (await erase({ id: steve.id })).body as { id: string };
    const imported = await cli(t.database.db, ["import", file]);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(
      new RegExp(`players\\[\\d+\\]\\.id: player ${steve.id} was erased \\(receipt ${receipt.id}\\); an erased player's id is not given again`),
    );
    expect(await t.database.db.prisma.player.findUnique({ where: { id: steve.id } })).toBeNull();
  });
});
