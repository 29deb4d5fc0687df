import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { gunzipSync, gzipSync } from "node:zlib";
import { Webhook } from "standardwebhooks";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressAllowList } from "../src/auth/address-allow-list.js";
import { KeyCache } from "../src/auth/key-cache.js";
import { writeBackup } from "../src/backup/backup.js";
import { type BackupHeader, gzipped, readBackup, sealedLines } from "../src/backup/format.js";
import { restoreBackup } from "../src/backup/restore.js";
import { BACKUP_TABLES, NOT_BACKED_UP, q, schemaTables } from "../src/backup/tables.js";
import { runCli } from "../src/cli/cli.js";
import { localFiles } from "../src/cli/transfer-command.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import type { Database } from "../src/db/database.js";
import { sealSecret } from "../src/webhooks/secrets.js";
import { DeliveryWorker } from "../src/webhooks/worker.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";
import { openStream } from "./helpers/sse.js";

/**
 * `backup` and `restore` (issue 40) through the CLI's own dispatcher, on real
 * databases (PGlite, or PostgreSQL when DATABASE_URL is set): a community with
 * keys, a rotation, an address list, a webhook, audit entries, an idempotent
 * write and events, backed up while the app serves, restored into a new
 * database, and served from there.
 */
const dir = mkdtempSync(path.join(tmpdir(), "backup-"));
const file = path.join(dir, "community.backup");
// The ledger a server would have made at its start (ERASURE_LEDGER): empty, no erasure yet.
writeFileSync(path.join(dir, "erasures.jsonl"), "");
let source: TestApp;
let receiver: Receiver;
let keyA: string;
let oldKeyB: string;
let newKeyB: string;
let secret: string;
let syncToken: string;
let eventId: string;
let playerId: number;

async function cli(db: Database, argv: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const config = loadConfig({ NODE_ENV: "test", ...FAST_WEBHOOKS, ERASURE_LEDGER: path.join(dir, "erasures.jsonl"), ...env });
  const code = await runCli(argv, { config, db, logger: createLogger("silent") }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** Every row the backup holds, as PostgreSQL writes it, table by table (written-by ids are the server's own). */
async function everything(db: Database): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const { table, key } of BACKUP_TABLES) {
    const rows = await db.prisma.$queryRawUnsafe<{ r: unknown }[]>(
      `SELECT to_jsonb(t) - 'writtenBy' AS r FROM ${q(table)} t ORDER BY ${key.map((c) => `t.${q(c)}`).join(", ")}`,
    );
    all[table] = rows.map((x) => x.r);
  }
  return all;
}

async function emptyTables(db: Database): Promise<string[]> {
  const full = await everything(db);
  return Object.keys(full).filter((t) => full[t]!.length > 0);
}

beforeAll(async () => {
  receiver = await startReceiver();
  source = await startTestApp({ env: FAST_WEBHOOKS });
  keyA = await source.key("user-A");
  oldKeyB = await source.key("user-B");
  const by = { actor: "cli:test" };
  newKeyB = (await source.users.rotate("user-B", by, 3600)).apiKey;
  await source.users.setAllowedAddresses("user-A", AddressAllowList.parse("127.0.0.1,::1").list!, by);
  const added = await cli(source.database.db, ["webhook", "add", receiver.url]);
  expect(added.code, added.stderr).toBe(0);
  secret = added.stdout.trim().split("\n")[1]!;
  const players = [await makePlayer(source.database.db.prisma), await makePlayer(source.database.db.prisma)];
  playerId = players[0]!.id;
  const reward = (key: string, rewardId: number) =>
    request(source.url).post("/api/website/create-reward-log").set("X-API-Key", key).send({ playerId, rewardId });
  await reward(keyA, 1).set("Idempotency-Key", "k-1").expect(201);
  const list = await request(source.url).get("/api/player/get-all-players").set("X-API-Key", keyA).expect(200);
  syncToken = list.headers["sync-token"]!;
  const stream = await openStream(source.url, keyA, "");
  await stream.waitFor("the position", () => stream.lastId !== "");
  await reward(keyA, 2).expect(201);
  source.events.announce();
  await stream.waitFor("an event", () => stream.events.length > 0);
  eventId = stream.events[0]!.id;
  await stream.close();
  const backup = await cli(source.database.db, ["backup", file]);
  expect(backup.code, backup.stderr).toBe(0);
  expect(backup.stdout).toMatch(
    /^Backed up to .*community\.backup in [\d.]+ s: 2 api_users, 2 players, .*2 reward_logs, .*1 idempotency_keys, 1 webhook_endpoints/,
  );
}, 60_000);
afterAll(async () => {
  await source?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("backup and restore", () => {
  it("when a backup is restored into a new database, then every key works, the webhook signs with its old secret, the rows are equal and sync tokens and event ids from before are 410", async () => {
    const target = await createTestDatabase();
    let app: TestApp | undefined;
    let worker: DeliveryWorker | undefined;
    try {
      const restored = await cli(target.db, ["restore", file]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(/^Restored .* \(made .* at schema \d+_\w+\) in [\d.]+ s: 2 api_users, 2 players/);
      // The endpoints it brought deliver from a server started on it: said, with how to keep a drill from it.
      expect(restored.stderr).toMatch(
        /^Warning: 1 webhook endpoint\(s\) came with the backup: a server started on this database delivers to them .*unless it runs with DRILL_MODE=true\. For a drill, restore with DRILL_MODE=true: a server then starts on this database only in drill mode\.\n$/m,
      );
      // `counts` on the restored database says what the restore (and restore --check) said.
      const counts = await cli(target.db, ["counts"]);
      expect(counts.code).toBe(0);
      expect(counts.stdout).toBe(`This database holds: ${/ s: (.*)\.\n$/.exec(restored.stdout)![1]}.\n`);
      expect(await everything(target.db)).toEqual(await everything(source.database.db));
      // Written by the restoring transaction, not by the source server's: the restored events sort before anything written after.
      for (const table of ["players", "webhook_events"]) {
        const [{ n }] = await target.db.prisma.$queryRawUnsafe<[{ n: number }]>(`SELECT count(DISTINCT "writtenBy")::int AS n FROM ${table}`);
        expect(n, table).toBe(1);
      }

      for (const { table, key } of BACKUP_TABLES.filter((t) => t.key[0] === "id" && !t.unserial)) {
        const [{ behind }] = await target.db.prisma.$queryRawUnsafe<[{ behind: boolean }]>(
          `SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('${q(table)}', '${key[0]}')::regclass), 0) < coalesce(max(id), 0) AS behind FROM ${q(table)}`,
        );
        expect(behind, table).toBe(false);
      }

      app = await startTestApp({ database: { ...target, drop: () => Promise.resolve() }, env: FAST_WEBHOOKS });
      const get = (key: string, query = "") => request(app!.url).get(`/api/player/get-all-players${query}`).set("X-API-Key", key);
      for (const key of [keyA, oldKeyB, newKeyB]) await get(key).expect(200);
      expect((await get(keyA, `?since=${encodeURIComponent(syncToken)}`)).status).toBe(410);
      const resumed = await openStream(app.url, keyA, "", { "Last-Event-ID": eventId });
      expect(resumed.status).toBe(410);
      await resumed.close();

      // Past every id: a new row gets an id past the restored ones.
      const created = await request(app.url).post("/api/website/create-reward-log").set("X-API-Key", keyA).send({ playerId, rewardId: 4242 }).expect(201);
      const restoredIds = ((await everything(source.database.db)).reward_logs as { id: number }[]).map((r) => r.id);
      expect(Number((created.body as { id: number }).id)).toBeGreaterThan(Math.max(...restoredIds));
      // The idempotent write is replayed, not made again.
      const replay = await request(app.url)
        .post("/api/website/create-reward-log")
        .set("X-API-Key", keyA)
        .set("Idempotency-Key", "k-1")
        .send({ playerId, rewardId: 1 });
      expect(replay.status).toBe(201);
      expect(replay.headers["idempotent-replayed"]).toBe("true");

      receiver.received.length = 0;
      worker = new DeliveryWorker(target.db, loadConfig({ NODE_ENV: "test", ...FAST_WEBHOOKS }), createLogger("silent"));
      void worker.start();
      await receiver.waitFor("the new reward's event", () => receiver.received.some((r) => r.body.includes('"rewardId":4242')));
      const verifier = new Webhook(secret);
      for (const r of receiver.received) expect(() => verifier.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    } finally {
      await worker?.stop();
      await app?.close();
      await target.drop();
    }
  });

  it("when the backup's file cannot be written, then the command says so and exits 1", async () => {
    const result = await cli(source.database.db, ["backup", path.join(dir, "no-such-folder", "x.backup")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Cannot write .*x\.backup: ENOENT: no such file or directory, open '/);
  });

  it("when the backup is checked, then it is read through and found whole, and nothing is written", async () => {
    const target = await createTestDatabase();
    try {
      const checked = await cli(target.db, ["restore", "--check", file]);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/community\.backup is whole \(made .* at schema \d+_\w+\), read in [\d.]+ s: 2 api_users, 2 players/);
      expect(await emptyTables(target.db)).toEqual([]);
    } finally {
      await target.drop();
    }
  });

  it("when the target holds a row, then the restore is refused with a message and the target is as it was", async () => {
    const target = await createTestDatabase();
    try {
      await target.db.prisma.player.create({ data: { pseudo: "already", token: "t", ip: "198.51.100.1" } });
      const before = await everything(target.db);
      const refused = await cli(target.db, ["restore", file]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^The database already holds data \(players\): a backup is restored into an empty database only/);
      expect(await everything(target.db)).toEqual(before);
    } finally {
      await target.drop();
    }
  });

  const bytes = () => readFileSync(file);
  const text = () => gunzipSync(bytes()).toString("utf8");
  const cases: [string, () => Buffer, RegExp][] = [
    ["truncated", () => bytes().subarray(0, Math.floor(bytes().length / 2)), /the file is truncated/],
    ["cut at a line", () => gzipSync(text().split("\n").slice(0, 5).join("\n") + "\n"), /without its end line: the file is truncated/],
    ["altered", () => gzipSync(text().replace(/"pseudo": "/, '"pseudo": "x')), /its SHA-256 does not match its content: the file was altered/],
    [
      "of another version",
      () => gzipSync(text().replace('"version":1', '"version":2')),
      /version 2 of the backup format; this version of the service reads version 1 only/,
    ],
    ["not a backup", () => Buffer.from("{}"), /not a gzip file/],
  ];
  for (const [what, make, message] of cases) {
    it(`when the file is ${what}, then it is refused whole, naming why, and nothing is written`, async () => {
      const target = await createTestDatabase();
      try {
        const bad = path.join(dir, `${what}.backup`);
        writeFileSync(bad, make());
        for (const argv of [
          ["restore", bad],
          ["restore", "--check", bad],
        ]) {
          const refused = await cli(target.db, argv);
          expect(refused.code).toBe(1);
          expect(refused.stderr).toMatch(/^Refused .*, nothing was written: /);
          expect(refused.stderr).toMatch(message);
        }
        expect(await emptyTables(target.db)).toEqual([]);
      } finally {
        await target.drop();
      }
    });
  }

  it("when the writing pass meets a row the database refuses (a file swapped after its check), then the target is left as it was", async () => {
    const target = await createTestDatabase();
    try {
      // A sealed file whose second player repeats the first one's id: --check refuses it as restore would.
      let header: BackupHeader | undefined;
      const tables = new Map<string, string[]>();
      for await (const e of readBackup(Readable.from([bytes()]))) {
        if (e.kind === "header") header = e.header;
        if (e.kind === "table") tables.set(e.table, []);
        if (e.kind === "row") tables.get(e.table)!.push(e.line);
      }
      const players = tables.get("players")!;
      players[1] = players[1]!.replace(/"id": \d+/, players[0]!.match(/"id": \d+/)![0]);
      const sections = [...tables].map(([table, rows]) => ({ table, lines: Readable.from(rows) as AsyncIterable<string> }));
      const pieces: Buffer[] = [];
      for await (const piece of gzipped(sealedLines(header!, sections))) pieces.push(piece);
      const bad = path.join(dir, "midway.backup");
      writeFileSync(bad, Buffer.concat(pieces));
      const checked = await cli(target.db, ["restore", "--check", bad]);
      expect(checked.code).toBe(1);
      expect(checked.stderr).toMatch(/two rows of players hold the same id \(players_pkey\)/);
      // The whole file checked, that one read as it is written: the database refuses it midway, and keeps nothing.
      let reads = 0;
      const refused = await restoreBackup(target.db, () => localFiles.read(reads++ === 0 ? file : bad), undefined).catch((e: Error) => e);
      expect((refused as Error).message).toMatch(
        /^The database refuses a row of the backup's players \(.*players_pkey.*\): the file was altered or is not a backup\.$/,
      );
      expect(await emptyTables(target.db)).toEqual([]);
    } finally {
      await target.drop();
    }
  });

  it("when a webhook secret was sealed under WEBHOOKS_SECRET_KEY, then a restore without that key says so, and restores it as it was (and an expired idempotency record is left out)", async () => {
    const sealed = await createTestDatabase();
    const target = await createTestDatabase();
    try {
      const key = "the source server's key of 32 characters or more";
      await sealed.db.prisma.webhookEndpoint.create({ data: { url: receiver.url, secret: sealSecret("whsec_c2VjcmV0", key) } });
      // An idempotency record past its 24 hours is of no use: left out.
      const user = await sealed.db.prisma.apiUser.create({ data: { username: "old", keyHash: "0".repeat(64), keyHint: "gsk_0000" } });
      await sealed.db.prisma.idempotencyKey.create({
        data: {
          apiUserId: user.id,
          key: "k",
          route: "POST /x",
          fingerprint: "0".repeat(64),
          responseStatus: 201,
          createdAt: new Date(Date.now() - 25 * 3600_000),
        },
      });
      const keyed = path.join(dir, "keyed.backup");
      expect((await cli(sealed.db, ["backup", keyed])).code).toBe(0);
      const missing = await cli(target.db, ["restore", "--check", keyed]);
      expect(missing.stderr).toContain("Warning: 1 webhook secret: the secret is encrypted and WEBHOOKS_SECRET_KEY is not set. They are restored as they are;");
      const other = await cli(target.db, ["restore", "--check", keyed], { WEBHOOKS_SECRET_KEY: "another key, also of 32 characters or more" });
      expect(other.stderr).toContain("Warning: 1 webhook secret: the secret was encrypted under another WEBHOOKS_SECRET_KEY.");
      const same = await cli(target.db, ["restore", keyed], { WEBHOOKS_SECRET_KEY: key });
      expect(same.code, same.stderr).toBe(0);
      // Nothing about the secret: only that its endpoint will deliver.
      expect(same.stderr).toMatch(/^Warning: 1 webhook endpoint\(s\) came with the backup[^\n]*\n$/);
      expect(same.stdout).toMatch(/1 api_users, .*0 idempotency_keys, 1 webhook_endpoints/);
      expect(await everything(target.db)).toEqual({ ...(await everything(sealed.db)), idempotency_keys: [] });
    } finally {
      await sealed.drop();
      await target.drop();
    }
  });

  it("when a write comes while a backup is being made, then it is not in the backup, and it is served: at once on PostgreSQL, once the backup ends on the embedded database", async () => {
    // With the server's key cache: the request reads nothing before its write.
    const app = await startTestApp({ keyCache: new KeyCache() });
    try {
      const key = await app.key("user-A");
      const player = await makePlayer(app.database.db.prisma);
      await request(app.url).get("/api/player/get-all-players").set("X-API-Key", key).expect(200);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const during = path.join(dir, "during.backup");
      // A backup whose file takes its pieces only once released: its transaction stays open until then.
      const backup = writeBackup(
        app.database.db,
        async (pieces) => {
          opened();
          await released;
          await localFiles.write(during, pieces);
        },
        { kept: app.config },
      );
      await open;
      const write = request(app.url)
        .post("/api/website/create-reward-log")
        .set("X-API-Key", key)
        .send({ playerId: player.id, rewardId: 3 })
        .then((res) => res);
      if (app.database.db.kind === "postgres") expect((await write).status).toBe(201);
      release();
      expect((await write).status).toBe(201);
      expect(await backup).toMatchObject({ players: 1, reward_logs: 0 });
      expect((await cli(app.database.db, ["restore", "--check", during])).stdout).toMatch(/1 players, .*0 reward_logs/);
    } finally {
      await app.close();
    }
  });

  it("when a migration adds a table, then it is either backed up or named as left out", async () => {
    const tables = await schemaTables(source.database.db.prisma);
    expect(tables).toEqual([...BACKUP_TABLES.map((t) => t.table), ...Object.keys(NOT_BACKED_UP)].sort());
  });
});
