import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BACKUP_LINE_BYTES } from "../src/backup/format.js";
import { RestoreRefused, restoreBackup } from "../src/backup/restore.js";
import { runCli } from "../src/cli/cli.js";
import { localFiles } from "../src/cli/transfer-command.js";
import { createLogger } from "../src/core/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase } from "./helpers/database.js";
import { makePlayer, makeWorld } from "./helpers/fixtures.js";
import { cliProcess, spawnService } from "./helpers/process.js";

/**
 * Security review, round 5 (issue 49): a backup is untrusted input, and the files the CLI writes are its
 * caller's alone. A file of one gzip'd 600 MiB line is refused in one line, by the CLI and by a running
 * embedded server, which keeps answering; `backup` and `export` never write through what another user put
 * at the path (a file of theirs, a symbolic link, a named pipe), and `import` and `restore` never block on a
 * named pipe.
 */
let t: TestApp;
const dir = mkdtempSync(path.join(tmpdir(), "backup-files-"));
chmodSync(dir, 0o755);
const nobody = 65534;
const asRoot = process.getuid?.() === 0;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  return cliOn(t.database.db, ...argv);
}

async function cliOn(db: TestApp["database"]["db"], ...argv: string[]) {
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

/** A valid header, then one line of `mib` MiB: 600 gzip members of 1 MiB each (a gzip file may hold several), about 1 KB each. */
function oneLongLine(file: string, mib: number): void {
  const header = gzipSync(
    `${JSON.stringify({ format: "community-backup", version: 1, schema: "20261202100000_write_freeze", createdAt: "2026-12-02T00:00:00Z", source: "embedded" })}\n`,
  );
  const member = gzipSync(Buffer.alloc(1024 * 1024, "a"), { level: 9 });
  writeFileSync(file, Buffer.concat([header, ...Array.from({ length: mib }, () => member)]));
}

/** The backup at `file` with `edit` applied to its lines (header first, end line excluded), sealed again as anyone can (SHA-256). */
function resealed(file: string, edit: (lines: string[]) => string[]): string {
  const lines = gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter(Boolean);
  const end = JSON.parse(lines.pop()!) as [string, Record<string, number>, string];
  const body = edit(lines)
    .map((l) => `${l}\n`)
    .join("");
  const out = path.join(dir, `edited-${path.basename(file)}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(out, gzipSync(body + `${JSON.stringify(["end", end[1], createHash("sha256").update(body).digest("hex")])}\n`));
  return out;
}

const fifo = (name: string) => {
  const p = path.join(dir, name);
  execFileSync("mkfifo", [p]);
  return p;
};

describe("a backup file is untrusted input", () => {
  it(`when a line is longer than ${MAX_BACKUP_LINE_BYTES / 1024 / 1024} MiB (one gzip'd line of 600 MiB), then restore --check and restore refuse it in one line, without reading it all`, async () => {
    const file = path.join(dir, "long-line.backup");
    oneLongLine(file, 600);
    expect(statSync(file).size).toBeLessThan(1024 * 1024);
    for (const args of [
      ["restore", "--check", file],
      ["restore", file],
    ]) {
      const r = await cli(...args);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`Refused ${file}, nothing was written: line 2 is longer than 8 MiB: the file was altered or is not a backup.\n`);
    }
  });

  it("when restore --check of that file runs beside the embedded server, then the server refuses it and keeps answering", async () => {
    const dataDir = path.join(dir, "embedded");
    const file = path.join(dir, "long-line-2.backup");
    oneLongLine(file, 600);
    const server = spawnService({ DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "" });
    try {
      const url = `http://127.0.0.1:${await server.port()}`;
      const checked = await cliProcess(["restore", "--check", file], { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "" });
      expect(checked.code, checked.stderr).toBe(1);
      expect(checked.stderr).toBe(`Refused ${file}, nothing was written: line 2 is longer than 8 MiB: the file was altered or is not a backup.\n`);
      await request(url).get("/readyz").expect(200);
      expect(server.child.exitCode).toBeNull();
    } finally {
      await server.stop();
    }
  }, 60_000);

  it("when the header names a schema or date with terminal escapes, or a row an id past half of its sequence, then the file is refused, nothing written", async () => {
    const file = path.join(dir, "real.backup");
    await makePlayer(t.database.db.prisma);
    expect((await cli("backup", file)).code).toBe(0);
    const escaped = resealed(file, ([header, ...rest]) => [JSON.stringify({ ...JSON.parse(header!), schema: "\u001b[2J\u001b]0;owned\u0007" }), ...rest]);
    const checked = await cli("restore", "--check", escaped);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toBe(
      `Refused ${escaped}, nothing was written: the file's first line names a schema, date or source this service never writes: the file was altered or is not a backup.\n`,
    );
    const exhausted = resealed(file, (lines) => {
      const at = lines.indexOf(JSON.stringify(["table", "players"])) + 1;
      const row = JSON.parse(lines[at]!) as { id: number };
      lines[at] = JSON.stringify({ ...row, id: 2_147_483_000 });
      return lines;
    });
    const empty = await createTestDatabase();
    try {
      const restored = await cliOn(empty.db, "restore", exhausted);
      expect(restored.code).toBe(1);
      expect(restored.stderr).toBe(
        "The backup's players hold id 2147483000, past 1073741823, the largest a restore may give (half of what the id sequence holds: " +
          "the other half stays for records created through the API). The file was altered, or comes from another service. Nothing was written.\n",
      );
      expect(await empty.db.prisma.apiUser.count()).toBe(0);
    } finally {
      await empty.drop();
    }
  });
});

describe("restore and the rows of a file sealed again", () => {
  let file: string;
  beforeAll(async () => {
    file = path.join(dir, "rows.backup");
    const prisma = t.database.db.prisma;
    for (let i = 0; i < 3; i++) await makePlayer(prisma);
    const { ownerId } = await makeWorld(prisma);
    // Two rewards whose requests sent their moments (one grant per moment), two a double kill left to default.
    for (const hour of [12, 13])
      await prisma.rewardLog.create({ data: { playerId: ownerId, rewardId: 7, rewardedAt: new Date(`2025-06-01T${hour}:00:00Z`), rewardedAtSent: true } });
    for (let i = 0; i < 2; i++) await prisma.rewardLog.create({ data: { playerId: ownerId, rewardId: 8, rewardedAt: new Date("2025-06-01T14:00:00Z") } });
    expect((await cli("backup", file)).code).toBe(0);
    playersInFile = await prisma.player.count();
  });
  let playersInFile = 0;
  const playerRow = (lines: string[], n: number) => lines.indexOf(JSON.stringify(["table", "players"])) + 1 + n;
  const restoreInto = async (edited: string) => {
    const empty = await createTestDatabase();
    try {
      const r = await cliOn(empty.db, "restore", edited);
      return { ...r, players: await empty.db.prisma.player.count() };
    } finally {
      await empty.drop();
    }
  };

  it("when the file was made at another schema, then --check says that this version refuses to restore it, and restore refuses it", async () => {
    const older = resealed(file, ([header, ...rest]) => [JSON.stringify({ ...JSON.parse(header!), schema: "20200101000000_older" }), ...rest]);
    const checked = await cli("restore", "--check", older);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stderr).toMatch(
      /^Warning: it was made at schema 20200101000000_older; this database is at \d{14}_\w+: this version refuses to restore it \(restore it with the version that made it, then upgrade\)\.\n$/,
    );
    const r = await restoreInto(older);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^The backup was made at schema 20200101000000_older; this database is at /);
  });

  const notStored = (field: string) =>
    new RegExp(
      `^Refused .*, nothing was written: the row of players whose id is \\d+ is not one the API would store \\(${field}: .*\\): the file was altered\\.\\n$`,
    );
  it.each([
    [
      "a column no table has",
      { isAdmin: true },
      /^Refused .*, nothing was written: the backup's players do not have this database's columns \(unknown isAdmin\): the file was altered or made by another version\.\n$/,
    ],
    ["a 5,000-character pseudo", { pseudo: "p".repeat(5000) }, notStored("pseudo")],
    ["a NUL character in a text", { tag: "a\u0000b" }, notStored("tag")],
    ["a value of the wrong type", { credit: "lots" }, notStored("credit")],
    ["an impossible date", { firstConnection: "2026-02-30T00:00:00+00:00" }, notStored("firstConnection")],
  ])("when the third row holds %s, then --check and restore refuse the file alike, naming what is wrong, nothing written", async (_what, change, message) => {
    const edited = resealed(file, (lines) => {
      const at = playerRow(lines, 2);
      lines[at] = JSON.stringify({ ...(JSON.parse(lines[at]!) as object), ...change });
      return lines;
    });
    // --check, on a database at the file's schema, sees it as the restore does.
    const checked = await cli("restore", "--check", edited);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(message);
    const r = await restoreInto(edited);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.players).toBe(0);
  });

  const rowOf = (lines: string[], table: string, n: number) => lines.indexOf(JSON.stringify(["table", table])) + 1 + n;
  const editRow = (lines: string[], table: string, n: number, change: (row: Record<string, unknown>) => Record<string, unknown>) => {
    const at = rowOf(lines, table, n);
    lines[at] = JSON.stringify(change(JSON.parse(lines[at]!) as Record<string, unknown>));
    return lines;
  };
  const whole = /is whole/;
  it.each([
    [
      "a player's id twice",
      (l: string[]) => {
        l.splice(rowOf(l, "players", 3), 0, JSON.stringify({ ...(JSON.parse(l[rowOf(l, "players", 2)]!) as object), pseudo: "Another" }));
        return l;
      },
      /^Refused .*, nothing was written: two rows of players hold the same id \(players_pkey\): the file was altered\.\n$/,
    ],
    [
      "another player's pseudo but for its case",
      (l: string[]) => editRow(l, "players", 1, (r) => ({ ...r, pseudo: String(JSON.parse(l[rowOf(l, "players", 0)]!).pseudo).toUpperCase() })),
      /^Refused .*, nothing was written: two rows of players hold the same pseudo \(players_pseudo_key\): the file was altered\.\n$/,
    ],
    [
      "a reward of the same player, reward and moment, the moment written at another offset",
      (l: string[]) => editRow(l, "reward_logs", 1, (r) => ({ ...r, rewardedAt: "2025-06-01T14:00:00+02:00" })),
      /^Refused .*, nothing was written: two rows of reward_logs hold the same playerId, rewardId, rewardedAt \(reward_logs_player_reward_time_key\): the file was altered\.\n$/,
    ],
    [
      "a reward sent with its moment at the moment of two sent without (a double kill's)",
      (l: string[]) => editRow(l, "reward_logs", 1, (r) => ({ ...r, rewardId: 8, rewardedAt: "2025-06-01T14:00:00+00:00" })),
      "whole",
    ],
    [
      "a world whose owner the file does not hold",
      (l: string[]) => editRow(l, "worlds", 0, (r) => ({ ...r, ownerId: 999999 })),
      /^Refused .*, nothing was written: the row of worlds whose id is \d+ names players id 999999, which the file does not hold before it \(worlds_owner_id_fkey\): the file was altered\.\n$/,
    ],
    [
      "two pseudos that differ only by an accented letter's case (PostgreSQL decides: its lower())",
      (l: string[]) => {
        editRow(l, "players", 0, (r) => ({ ...r, pseudo: "Élodie" }));
        return editRow(l, "players", 1, (r) => ({ ...r, pseudo: "élodie" }));
      },
      "as the database's locale says",
    ],
  ] as const)(
    "when the file holds %s, then --check says what restore then does, and restore refuses it in one line, nothing written",
    async (_what, edit, message) => {
      const edited = resealed(file, edit);
      const checked = await cli("restore", "--check", edited);
      const r = await restoreInto(edited);
      expect({ code: checked.code, refused: checked.stderr }).toEqual({ code: r.code, refused: r.stderr });
      if (message instanceof RegExp) expect(r.stderr).toMatch(message);
      else if (message === "whole") expect({ checked: checked.stdout, restored: r.code }).toEqual({ checked: expect.stringMatching(whole), restored: 0 });
      else {
        // Whether É and é are one pseudo is the database's locale: --check follows it either way.
        const folds = (await t.database.db.prisma.$queryRawUnsafe<{ folds: boolean }[]>("SELECT lower('É') = 'é' AS folds"))[0]?.folds === true;
        expect(checked.stdout).toMatch(folds ? /^$/ : whole);
        if (folds) expect(r.stderr).toMatch(/two rows of players hold the same pseudo/);
      }
      expect(r.players).toBe(r.code === 0 ? playersInFile : 0);
    },
  );

  it("when a webhook endpoint's URL is not an http(s) URL or its events are not the service's, then --check and restore refuse the file, never echoing the URL", async () => {
    await t.database.db.prisma.webhookEndpoint.create({
      data: { url: "https://hooks.example/x", events: [], secret: "plain:whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    });
    const withHook = path.join(dir, "hook.backup");
    expect((await cli("backup", withHook)).code).toBe(0);
    await t.database.db.prisma.webhookEndpoint.deleteMany();
    const edit = (change: Record<string, unknown>) =>
      resealed(withHook, (lines) => {
        const at = lines.indexOf(JSON.stringify(["table", "webhook_endpoints"])) + 1;
        lines[at] = JSON.stringify({ ...(JSON.parse(lines[at]!) as object), ...change });
        return lines;
      });
    const badUrl = edit({ url: "javascript:secret-token" });
    for (const r of [await cli("restore", "--check", badUrl), await restoreInto(badUrl)]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^Refused .*, nothing was written: webhook endpoint \d+'s url: expected http:\/\/ or https:\/\/, not javascript:\/\/: the file was altered\.\n$/,
      );
      expect(r.stderr).not.toContain("secret-token");
    }
    const badEvents = edit({ events: ["player.created", "<script>"] });
    expect((await cli("restore", "--check", badEvents)).stderr).toMatch(
      /webhook endpoint \d+'s events are not a list of this service's event types: the file was altered\.\n$/,
    );
  });

  it("when the file is swapped between the check and the writing (a table of the service's own schema added), then nothing is written", async () => {
    const swapped = resealed(file, (lines) => [
      ...lines,
      JSON.stringify(["table", "_prisma_migrations"]),
      JSON.stringify({ id: "x", migration_name: "99999999999999_fake" }),
    ]);
    const empty = await createTestDatabase();
    try {
      const before = await empty.db.prisma.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM _prisma_migrations");
      let reads = 0;
      const refused = await restoreBackup(empty.db, () => localFiles.read(reads++ === 0 ? file : swapped), undefined).catch((e: Error) => e);
      expect(refused).toBeInstanceOf(RestoreRefused);
      expect((refused as Error).message).toBe("The file holds a table this service does not have: _prisma_migrations.");
      expect(await empty.db.prisma.$queryRawUnsafe("SELECT count(*)::int AS n FROM _prisma_migrations")).toEqual(before);
      expect(await empty.db.prisma.player.count()).toBe(0);
      // Another file of the same tables, but not the one checked: refused at its end.
      const other = resealed(file, (lines) => {
        const at = playerRow(lines, 0);
        lines[at] = JSON.stringify({ ...(JSON.parse(lines[at]!) as object), pseudo: "Swapped" });
        return lines;
      });
      reads = 0;
      const changed = await restoreBackup(empty.db, () => localFiles.read(reads++ === 0 ? file : other), undefined).catch((e: Error) => e);
      expect((changed as Error).message).toBe(
        "The file changed between its check and its restore (its SHA-256 is not the same): restore a file nothing else writes to.",
      );
      expect(await empty.db.prisma.player.count()).toBe(0);
    } finally {
      await empty.drop();
    }
  });
});

describe("a backup signed with BACKUP_SIGNING_KEY", () => {
  const key = "the operator's backup signing key, 32+ chars";
  const signedCli = async (db: TestApp["database"]["db"], signingKey: string | undefined, ...argv: string[]) => {
    let stdout = "";
    let stderr = "";
    const config = { ...t.config, backupSigningKey: signingKey };
    const code = await runCli(argv, { config, db, logger: createLogger("silent") }, { stdout: (x) => (stdout += x), stderr: (x) => (stderr += x) });
    return { code, stdout, stderr };
  };

  it("when a file is signed with the key, then --check says so and restore takes it; edited and sealed again, unsigned, or signed with another key, it is refused unless --unsigned", async () => {
    const signed = path.join(dir, "signed.backup");
    expect((await signedCli(t.database.db, key, "backup", signed)).code).toBe(0);
    const checked = await signedCli(t.database.db, key, "restore", "--check", signed);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/ is whole and signed with this BACKUP_SIGNING_KEY \(made /);

    // An editor without the key: a change of their own, sealed again (SHA-256) as anyone can, without a signature they cannot make.
    const edited = resealed(signed, (lines) => {
      const at = lines.indexOf(JSON.stringify(["table", "players"])) + 1;
      lines[at] = JSON.stringify({ ...(JSON.parse(lines[at]!) as object), staff: true });
      return lines;
    });
    const unsigned = path.join(dir, "unsigned.backup");
    expect((await signedCli(t.database.db, undefined, "backup", unsigned)).code).toBe(0);
    const foreign = path.join(dir, "foreign.backup");
    expect((await signedCli(t.database.db, "another server's key of 32 characters!", "backup", foreign)).code).toBe(0);
    for (const [file, why] of [
      [edited, "it is not signed, and BACKUP_SIGNING_KEY is set"],
      [unsigned, "it is not signed, and BACKUP_SIGNING_KEY is set"],
      [foreign, "its signature is not made with this BACKUP_SIGNING_KEY (the file was altered and sealed again, or comes from a server with another key)"],
    ] as const) {
      const empty = await createTestDatabase();
      try {
        for (const args of [
          ["restore", "--check", file],
          ["restore", file],
        ]) {
          const r = await signedCli(empty.db, key, ...args);
          expect(r.code).toBe(1);
          expect(r.stderr).toBe(`Refused ${file}, nothing was written: ${why}: restore --unsigned takes it anyway, if you know where it comes from.\n`);
        }
        expect(await empty.db.prisma.player.count()).toBe(0);
        const taken = await signedCli(empty.db, key, "restore", "--unsigned", file);
        expect(taken.code, taken.stderr).toBe(0);
        expect(taken.stderr).toContain(`Warning: ${why}; taken as you asked (--unsigned)`);
      } finally {
        await empty.drop();
      }
    }
  });
});

describe("the files the CLI writes and reads are its caller's", () => {
  it("when backup or export names a new file or one of the caller's own, then it is written mode 0600, whatever its mode was, and no partial file is left", async () => {
    const mine = path.join(dir, "mine.backup");
    writeFileSync(mine, "old");
    chmodSync(mine, 0o644);
    expect((await cli("backup", mine)).code).toBe(0);
    expect(statSync(mine).mode & 0o777).toBe(0o600);
    expect(readFileSync(mine).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const exported = path.join(dir, "new-export.json");
    expect((await cli("export", exported)).code).toBe(0);
    expect(statSync(exported).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.endsWith(".partial"))).toEqual([]);
  });

  it.runIf(asRoot)("when another user created the file first (mode 0666), then backup and export refuse it, and it stays theirs and as it was", async () => {
    const theirs = path.join(dir, "theirs.backup");
    writeFileSync(theirs, "planted");
    chmodSync(theirs, 0o666);
    chownSync(theirs, nobody, nobody);
    for (const command of ["backup", "export"]) {
      const r = await cli(command, theirs);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `Cannot write ${theirs}: refused: ${theirs} belongs to another user (uid ${nobody}); nothing was written (name a new file, or remove it)\n`,
      );
    }
    expect(readFileSync(theirs, "utf8")).toBe("planted");
    expect(statSync(theirs).uid).toBe(nobody);
  });

  it("when a symbolic link or a named pipe is at the path, then backup refuses at once, follows nothing and leaves the link's target alone", async () => {
    const target = path.join(dir, "target.txt");
    writeFileSync(target, "keep me");
    const link = path.join(dir, "link.backup");
    symlinkSync(target, link);
    const linked = await cli("backup", link);
    expect(linked).toMatchObject({
      code: 1,
      stderr: `Cannot write ${link}: refused: ${link} is a symbolic link; nothing was written (name a new file, or remove it)\n`,
    });
    expect(readFileSync(target, "utf8")).toBe("keep me");
    expect(readlinkSync(link)).toBe(target);
    const pipe = fifo("pipe.backup");
    const piped = await cli("backup", pipe);
    expect(piped).toMatchObject({
      code: 1,
      stderr: `Cannot write ${pipe}: refused: ${pipe} is a named pipe; nothing was written (name a new file, or remove it)\n`,
    });
    expect(lstatSync(pipe).isFIFO()).toBe(true);
  });

  it("when import or restore names a named pipe nobody writes to, then it is refused at once, nothing read", async () => {
    const pipe = fifo("pipe.json");
    const imported = await cli("import", pipe);
    expect(imported).toMatchObject({ code: 1, stderr: `Cannot read ${pipe} as JSON: refused: ${pipe} is not a regular file; nothing was read\n` });
    const restored = await cli("restore", "--check", pipe);
    expect(restored).toMatchObject({
      code: 1,
      stderr: `Refused ${pipe}, nothing was written: it cannot be read: refused: ${pipe} is not a regular file; nothing was read.\n`,
    });
  });
});
