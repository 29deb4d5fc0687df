import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/cli.js";
import { createLogger } from "../src/core/logger.js";
import { exportData } from "../src/transfer/transfer.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase } from "./helpers/database.js";

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(tmpdir(), "cli-test-"));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(argv: string[], db = t.database.db) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    argv,
    { config: t.config, db, logger: createLogger("silent") },
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    },
  );
  return { code, stdout, stderr };
}

const getPlayers = (key: string) => request(t.url).get("/api/player/get-all-players").set("X-API-Key", key);

function file(name: string, content: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

const player = (id: number, pseudo: string, extra: Record<string, unknown> = {}) => ({
  id,
  pseudo,
  token: `tok-${id}`,
  credit: 10 * id,
  gradeId: 1,
  modStatus: false,
  staff: false,
  alert: true,
  nickname: null,
  firstConnection: "2025-06-01T12:00:00Z",
  totalTimeConnection: 12.5,
  status: "Offline",
  ip: "203.0.113.7",
  chatId: null,
  language: "FR",
  streamerPoint: 0,
  tag: null,
  color: null,
  highclub: false,
  vote: 3,
  ...extra,
});

/** One record of every resource, in the API's shapes. */
const community = {
  players: [player(1, "Steve", { nickname: "Stevie", chatId: "123" }), player(7, "Alex")],
  cosmetics: [
    {
      id: 3,
      name: "Halo",
      type: "hat",
      rarity: "rare",
      game: "lobby",
      argumentFr: "Une auréole",
      argumentEn: "A halo",
      image: "cosmetics/halo.png",
      lootbox: true,
      price: 500,
      description: null,
      collection: "Angels",
      render: null,
      permanent: false,
    },
  ],
  formAnswers: [
    {
      id: 2,
      playerId: 1,
      video: "https://video.example/1",
      question1: "a",
      question2: "b",
      question3: "c",
      question4: "d",
      question5: "e",
      stage1: true,
      stage2: null,
      stage3: null,
      comment: "",
    },
  ],
  infectedStats: [
    {
      playerId: 7,
      kill: 4,
      assist: 1,
      death: 2,
      game: 3,
      eligibleGame: 3,
      winZ: 1,
      winH: 1,
      playtime: 3600,
      coin: 20,
      point: 8,
      objectif: 2,
      newPlayer: false,
    },
  ],
  temporaryItems: [{ id: "5", itemName: "Double XP", itemDescription: "x2", price: 100, startDate: "2026-01-01T00:00:00Z", endDate: "2026-02-01T00:00:00Z" }],
  rewardLogs: [{ id: 9, playerId: 7, rewardId: 42, rewardedAt: "2026-03-04T05:06:07Z" }],
  worlds: [
    {
      id: 4,
      name: "Nether base",
      ownerId: 1,
      type: "NETHER",
      state: "unLoaded",
      lastUsed: "2026-05-05T10:00:00Z",
      status: "PUBLIC",
      spawnLocation: "0,64,0",
      gameruleRandomTickSpeed: 3,
      gameruleDaylightCycle: false,
      gamerulePvp: true,
      gamerulePlayerDamage: true,
      tag: null,
    },
  ],
  parkourMaps: [{ id: 6, name: "Sky run", enable: true, spawnLocation: "1,2,3,world,0,90", difficulty: "hard" }],
};

describe("user create", () => {
  it("when the name is free, then the key alone is printed on stdout and it works", async () => {
    const r = await cli(["user", "create", "user-D"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^gsk_[A-Za-z0-9_-]{43}\n$/);
    expect(r.stderr).toContain("groups D");
    expect((await getPlayers(r.stdout.trim())).status).toBe(200);
  });

  it("when a role is given, then it is stored; when the user is in no group, then stderr says so", async () => {
    const r = await cli(["user", "create", "analytics", "--role", "READ_ONLY"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("in no caller group");
    expect((await t.database.db.prisma.apiUser.findUniqueOrThrow({ where: { username: "analytics" } })).role).toBe("READ_ONLY");
  });

  it("when the name is taken (in any case), invalid, or missing, then a non-zero exit and a message on stderr", async () => {
    await cli(["user", "create", "taken-name"]);
    const taken = await cli(["user", "create", "TAKEN-NAME"]);
    expect(taken).toMatchObject({ code: 1, stdout: "" });
    expect(taken.stderr).toContain("Username 'TAKEN-NAME' is already used");
    const invalid = await cli(["user", "create", "no"]);
    expect(invalid).toMatchObject({ code: 1, stdout: "" });
    expect(invalid.stderr).toContain("Invalid username 'no': expected 3 to 32 characters");
    const badRole = await cli(["user", "create", "fine-name", "--role", "lower"]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain("Invalid role");
    const missing = await cli(["user", "create"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("user create takes one username");
  });
});

describe("user list, revoke, rotate", () => {
  it("when listing, then every user shows with groups and status but no key", async () => {
    const key = (await cli(["user", "create", "user-B"])).stdout.trim();
    const r = await cli(["user", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^username\s+role\s+groups\s+status\s+key/);
    expect(r.stdout).toMatch(/user-B\s+USER\s+B\s+active\s+gsk_\S{4}…/);
    expect(r.stdout).not.toContain(key.slice(8));
    const json = JSON.parse((await cli(["user", "list", "--json"])).stdout) as { username: string; status: string }[];
    expect(json.find((u) => u.username === "user-B")).toMatchObject({ status: "active" });
  });

  it("when a user is revoked, then its key gets 401 at once and revoking again is an error", async () => {
    const key = (await cli(["user", "create", "user-C"])).stdout.trim();
    expect((await getPlayers(key)).status).toBe(200);
    const r = await cli(["user", "revoke", "USER-c"]);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("Revoked 'user-C'");
    expect((await getPlayers(key)).status).toBe(401);
    expect((await cli(["user", "revoke", "user-C"])).code).toBe(1);
    expect((await cli(["user", "list"])).stdout).toMatch(/user-C\s+USER\s+C\s+revoked/);
  });

  it("when a key is rotated with --grace 0, then the new key alone is printed, works, and the old one gets 401", async () => {
    const old = (await cli(["user", "create", "user_A"])).stdout.trim();
    const r = await cli(["user", "rotate", "user_A", "--grace", "0"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^gsk_[A-Za-z0-9_-]{43}\n$/);
    expect(r.stderr).toContain("the previous key no longer works");
    expect((await getPlayers(old)).status).toBe(401);
    expect((await getPlayers(r.stdout.trim())).status).toBe(200);
  });

  it("when a key is rotated without --grace, then both keys work, and the listing shows the old one's expiry 24 h on", async () => {
    const old = (await cli(["user", "create", "grace-default"])).stdout.trim();
    const before = Date.now();
    const r = await cli(["user", "rotate", "grace-default"]);
    const after = Date.now();
    expect(r.code).toBe(0);
    const until = /works until (\S+Z)/.exec(r.stderr)![1]!;
    // Between 24 h after the command started and 24 h after it ended (printed to the second, maybe less).
    expect(Date.parse(until)).toBeGreaterThanOrEqual(Math.floor((before + 86_400_000) / 1000) * 1000);
    expect(Date.parse(until)).toBeLessThanOrEqual(after + 86_400_000);
    expect((await t.users.authenticate(old))?.username).toBe("grace-default");
    expect((await t.users.authenticate(r.stdout.trim()))?.username).toBe("grace-default");
    const listed = JSON.parse((await cli(["user", "list", "--json"])).stdout) as Record<string, string>[];
    expect(listed.find((u) => u.username === "grace-default")).toMatchObject({ "previous key until": until });
  });

  it("when --grace is not a whole number of seconds from 0 to 30 days, then exit 1 naming it, and nothing changes", async () => {
    const key = (await cli(["user", "create", "grace-check"])).stdout.trim();
    for (const grace of ["-1", "1.5", "abc", "2592001", ""]) {
      const r = await cli(["user", "rotate", "grace-check", `--grace=${grace}`]);
      expect(r.code, grace).toBe(1);
      expect(r.stderr).toContain("Invalid --grace");
      expect(r.stderr).toContain("expected a whole number of seconds from 0 to 2592000");
    }
    expect((await t.users.authenticate(key))?.username).toBe("grace-check");
    expect((await t.database.db.prisma.apiUser.findUniqueOrThrow({ where: { username: "grace-check" } })).rotatedAt).toBeNull();
  });

  it("when a name begins with '-', then user create refuses it; a user already so named is addressed after --", async () => {
    const refused = await cli(["user", "create", "--", "--json"]);
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toContain("Invalid username '--json': must not begin with '-'");
    // Created before the rule: revoke, rotate and allow-ip reach it after --, like any user.
    const old = (await cli(["user", "create", "dash-later"])).stdout.trim();
    await t.database.db.prisma.apiUser.update({ where: { username: "dash-later" }, data: { username: "--json" } });
    expect((await cli(["user", "revoke", "--json"])).code).toBe(2);
    const rotated = await cli(["user", "rotate", "--grace", "0", "--", "--json"]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect((await getPlayers(old)).status).toBe(401);
    expect(await cli(["user", "allow-ip", "--", "--json", "127.0.0.1"])).toMatchObject({ code: 0 });
    expect(await cli(["user", "revoke", "--", "--json"])).toMatchObject({ code: 0, stdout: "Revoked '--json': its key no longer works.\n" });
  });

  it("when the user does not exist, or the command is unknown, then a non-zero exit", async () => {
    expect(await cli(["user", "revoke", "ghost"])).toMatchObject({ code: 1, stderr: "API user 'ghost' not found\n" });
    expect(await cli(["user", "rotate", "nobody"])).toMatchObject({ code: 1, stderr: "API user 'nobody' not found\n" });
    expect((await cli(["user", "delete", "x"])).code).toBe(2);
    expect((await cli(["frobnicate"])).code).toBe(2);
  });
});

describe("import and export", () => {
  it("when a community is imported, exported, and imported into an empty database, then both exports are identical", async () => {
    const source = await createTestDatabase();
    const target = await createTestDatabase();
    try {
      const imported = await cli(["import", file("community.json", community)], source.db);
      expect(imported).toMatchObject({ code: 0, stderr: "" });
      expect(imported.stdout).toContain("Imported 2 players, 1 cosmetics, 1 formAnswers");
      const exported = await cli(["export"], source.db);
      expect(JSON.parse(exported.stdout)).toEqual(community);
      // Written a batch at a time, the same text as the whole export at once.
      expect(exported.stdout).toBe(`${JSON.stringify(await exportData(source.db.prisma), null, 2)}\n`);

      const exportFile = path.join(dir, "export.json");
      expect((await cli(["export", exportFile], source.db)).code).toBe(0);
      expect((await cli(["import", exportFile], target.db)).code).toBe(0);
      expect((await cli(["export"], target.db)).stdout).toBe(exported.stdout);
    } finally {
      await source.drop();
      await target.drop();
    }
  });

  it("when tables hold more records than an export batch, then the export written in batches is the same text as the whole", async () => {
    const scratch = await createTestDatabase();
    try {
      const players = Array.from({ length: 2345 }, (_, i) => player(i + 1, `Batch${i + 1}`));
      expect((await cli(["import", file("many.json", { players })], scratch.db)).code).toBe(0);
      const exported = await cli(["export"], scratch.db);
      expect(exported.stdout).toBe(`${JSON.stringify(await exportData(scratch.db.prisma), null, 2)}\n`);
      expect((JSON.parse(exported.stdout) as { players: unknown[] }).players).toHaveLength(2345);
    } finally {
      await scratch.drop();
    }
  });

  it("when records are imported again with changes, then they are updated by id, not duplicated", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      await cli(["import", file("first.json", { players: community.players })], db);
      const changed = { players: [player(7, "Alex", { credit: 999 }), player(8, "Newcomer")] };
      expect((await cli(["import", file("second.json", changed)], db)).code).toBe(0);
      const players = await db.prisma.player.findMany({ orderBy: { id: "asc" }, select: { id: true, pseudo: true, credit: true } });
      expect(players).toEqual([
        { id: 1, pseudo: "Steve", credit: 10 },
        { id: 7, pseudo: "Alex", credit: 999 },
        { id: 8, pseudo: "Newcomer", credit: 80 },
      ]);
    } finally {
      await scratch.drop();
    }
  });

  it("when ids were imported, then records created later get ids past them", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      await cli(["import", file("ids.json", { players: [player(500, "Imported")] })], db);
      const created = await db.prisma.player.create({ data: { pseudo: "Later", token: "t", ip: "::1" } });
      expect(created.id).toBe(501);
    } finally {
      await scratch.drop();
    }
  });

  it.each([
    [{ players: [player(1, "A"), { ...player(2, "B"), credit: -5 }] }, "players[1].credit: expected 0 or more"],
    [{ players: [{ ...player(1, "A"), credit: "10" }] }, "players[0].credit: expected an integer, received string"],
    [{ players: [{ ...player(1, "A"), langage: "FR" }] }, "players[0].langage: unknown field"],
    [{ players: [player(1, "A"), player(1, "B")] }, "players[1].id: 1 repeats players[0]"],
    [{ players: [player(1, "Same"), player(2, "SAME")] }, "players[1].pseudo: 'SAME' repeats players[0] (unique constraint players_pseudo_key)"],
    [{ players: [{ ...player(1, "A"), firstConnection: "2025-02-30T00:00:00Z" }] }, "players[0].firstConnection: expected an ISO 8601 date-time"],
    [{ cosmetics: [{ ...community.cosmetics[0], price: 1.5 }] }, "cosmetics[0].price: expected an integer"],
    [{ temporaryItems: [{ ...community.temporaryItems[0], endDate: "2025-01-01T00:00:00Z" }] }, "temporaryItems[0].endDate: expected a date after startDate"],
    [{ worlds: [{ ...community.worlds[0], gamerulePvp: "yes" }] }, `worlds[0].gamerulePvp: expected true, false, "true" or "false"`],
    [{ formAnswers: community.formAnswers }, "formAnswers[0].playerId: 1 matches no record of players"],
    [{ players: [player(1, "A")], shopItems: [] }, "shopItems: unknown array"],
    [{ players: {} }, "players: expected an array"],
    [[], "the file must hold a JSON object"],
  ])("when the file holds %j, then nothing is written and the error names '%s'", async (data, message) => {
    const before = await t.database.db.prisma.player.count();
    const r = await cli(["import", file("bad.json", data)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("nothing was written");
    expect(r.stderr).toContain(message);
    expect(await t.database.db.prisma.player.count()).toBe(before);
  });

  it("when a late array fails against the database, then the earlier arrays are not written either", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      const data = { players: [player(1, "Kept?")], rewardLogs: [{ id: 1, playerId: 404, rewardId: 1, rewardedAt: "2026-01-01T00:00:00Z" }] };
      const r = await cli(["import", file("late.json", data)], db);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("rewardLogs[0].playerId: 404 matches no record of players");
      expect(await db.prisma.player.count()).toBe(0);
    } finally {
      await scratch.drop();
    }
  });

  it("when an imported value is held by another id in the database, then the error names it and its constraint", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      await cli(["import", file("one.json", { players: [player(1, "Notch")] })], db);
      const r = await cli(["import", file("two.json", { players: [player(2, "NOTCH")] })], db);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("players[0].pseudo: 'NOTCH' is already used by id 1 (unique constraint players_pseudo_key)");
    } finally {
      await scratch.drop();
    }
  });

  it("when a pseudo moves to a new record and its old holder is renamed in the same import, then it is accepted", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      await cli(["import", file("before.json", { players: [player(1, "Alpha")] })], db);
      const renamed = { players: [player(1, "Charlie"), player(3, "ALPHA")] };
      const r = await cli(["import", file("renamed.json", renamed)], db);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      const players = await db.prisma.player.findMany({ orderBy: { id: "asc" }, select: { id: true, pseudo: true } });
      expect(players).toEqual([
        { id: 1, pseudo: "Charlie" },
        { id: 3, pseudo: "ALPHA" },
      ]);
    } finally {
      await scratch.drop();
    }
  });

  it("when reward logs repeat (player, reward, moment), in the file or in the database, then each is its own log, as a double kill is", async () => {
    const scratch = await createTestDatabase();
    const db = scratch.db;
    try {
      // An export of a community where one player got one reward twice in a second: its import takes both.
      const log = { id: 1, playerId: 7, rewardId: 42, rewardedAt: "2026-03-04T05:06:07Z" };
      const inFile = await cli(
        ["import", file("dup-logs.json", { players: [player(7, "Alex")], rewardLogs: [log, { ...log, id: 2, rewardedAt: "2026-03-04T07:06:07+02:00" }] })],
        db,
      );
      expect(inFile.code, inFile.stderr).toBe(0);
      const again = await cli(["import", file("logs2.json", { rewardLogs: [{ ...log, id: 5 }] })], db);
      expect(again.code, again.stderr).toBe(0);
      expect((await db.prisma.rewardLog.findMany({ orderBy: { id: "asc" } })).map((r) => [r.id, r.rewardedAt.toISOString()])).toEqual([
        [1, "2026-03-04T05:06:07.000Z"],
        [2, "2026-03-04T05:06:07.000Z"],
        [5, "2026-03-04T05:06:07.000Z"],
      ]);
    } finally {
      await scratch.drop();
    }
  });

  it("when field names, array names or the file's name hold terminal controls, then the errors print them escaped", async () => {
    const hostile = "\u001b]0;pwned\u0007\u001b[2J\u009b31m";
    const named = await cli(["import", file("controls.json", { players: [{ ...player(1, "A"), [hostile]: 1 }], [hostile]: [] })]);
    const broken = await cli(["import", file("broken.json", `{"players": [${hostile}]}`)]);
    const missing = await cli(["import", path.join(dir, "missing\u001b[2J.json")]);
    for (const r of [named, broken, missing]) {
      expect(r.code).toBe(1);
      // eslint-disable-next-line no-control-regex
      expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
    expect(named.stderr).toContain("\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m");
    expect(broken.stderr).toContain("players[0]: not valid JSON");
    expect(missing.stderr).toContain("missing\\x1b[2J.json");
  });

  it("when the file is missing or not JSON, then a clear error", async () => {
    expect((await cli(["import", path.join(dir, "nope.json")])).stderr).toMatch(/^Cannot read .*nope\.json as JSON/);
    expect((await cli(["import", file("broken.json", "{oops")])).code).toBe(1);
    expect((await cli(["import"])).code).toBe(2);
  });
});

describe("the usage", () => {
  it("when asked for help, then it lists every command", async () => {
    const r = await cli(["help"]);
    expect(r.code).toBe(0);
    for (const command of ["user create", "user list", "user revoke", "user rotate", "import", "export", "migrate"]) {
      expect(r.stdout).toContain(command);
    }
  });
  it("when migrate runs on an up-to-date database, then it says so", async () => {
    expect(await cli(["migrate"])).toMatchObject({ code: 0, stdout: "The database is up to date.\n" });
  });
});

// A check that the exported file on disk is the same JSON as stdout.
describe("export to a file", () => {
  it("when a file is named, then it holds the export and stdout stays empty", async () => {
    const exportFile = path.join(dir, "to-file.json");
    const r = await cli(["export", exportFile]);
    expect(r.stdout).toBe("");
    expect(Object.keys(JSON.parse(readFileSync(exportFile, "utf8")))).toEqual([
      "players",
      "cosmetics",
      "formAnswers",
      "infectedStats",
      "temporaryItems",
      "rewardLogs",
      "worlds",
      "parkourMaps",
    ]);
  });
});

describe("seed", () => {
  it("when run on an empty database at any date, then the sample loads with its active items active then and its expired item expired", async () => {
    for (const now of [new Date("2026-11-23T12:00:00Z"), new Date("2031-02-28T23:59:59Z")]) {
      const database = await createTestDatabase();
      try {
        const res = await runCli(
          ["seed"],
          { config: t.config, db: database.db, logger: createLogger("silent"), now: () => now },
          {
            stdout: () => undefined,
            stderr: () => undefined,
          },
        );
        expect(res).toBe(0);
        const items = await database.db.prisma.temporaryItem.findMany({ orderBy: { id: "asc" } });
        const active = items.filter((i) => i.startDate <= now && now < i.endDate).map((i) => i.itemName);
        expect(active, now.toISOString()).toEqual(["Double XP", "Winter hat"]);
        expect(items.find((i) => i.itemName === "Summer sale")!.endDate < now).toBe(true);
        expect(items.find((i) => i.itemName === "New year fireworks")!.startDate > now).toBe(true);
        expect(await database.db.prisma.player.count({ where: { nickname: null } })).toBeGreaterThan(0);
        expect(await database.db.prisma.player.count({ where: { nickname: { not: null } } })).toBeGreaterThan(0);
      } finally {
        await database.drop();
      }
    }
  });

  it("when the database already holds data, then the seed is refused, named, and nothing is written", async () => {
    await cli(["import", file("one.json", { players: [player(901, "Seeded_Before")] })]);
    const before = await t.database.db.prisma.cosmetic.count();
    const res = await cli(["seed"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/the database already holds data \(\d+ players.*\): the sample is loaded into an empty database only/);
    expect(await t.database.db.prisma.cosmetic.count()).toBe(before);
  });
});
