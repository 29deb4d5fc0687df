import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKUP_TABLES, q } from "../src/backup/tables.js";
import { type Database, openDatabase } from "../src/db/database.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { cliProcess, type ServiceProcess, spawnService } from "./helpers/process.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * docs/OPERATIONS.md, "Move to PostgreSQL", as an operator runs it: a server
 * on the embedded database with users, a webhook and writes; `cli -- backup`
 * while it serves (the server runs it through the control channel); `cli --
 * restore` into PostgreSQL; two instances on it. Real processes throughout.
 * The backup beside the embedded server runs without PostgreSQL; the move
 * needs DATABASE_URL (skipped without it, as other PostgreSQL tests are).
 */
const dir = mkdtempSync(path.join(tmpdir(), "move-"));
const dataDir = path.join(dir, "data");
const file = path.join(dir, "community.backup");
let embedded: ServiceProcess;
let receiver: Receiver;
let firstKey: string;
let keyB: string;
let secret: string;
let backedUp: string;

const cli = (args: string[], env: Record<string, string>) => cliProcess(args, { ...process.env, ...FAST_WEBHOOKS, LOG_LEVEL: "info", ...env });
const onEmbedded = (args: string[]) => cli(args, { DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "" });

/**
 * Every row a backup holds, but what the embedded server goes on writing after the backup, with no request:
 * the deliveries' progress (its worker) and when a key was last used (written after the answer); and a
 * cosmetic's version, which the restore moves on so that no ETag of the old server names the new one's data
 * (restore-versions.test.ts).
 */
async function everything(db: Database): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const { table, key } of BACKUP_TABLES) {
    const columns =
      table === "webhook_deliveries"
        ? `jsonb_build_object('id', t.id, 'eventId', t."eventId")`
        : `to_jsonb(t) - '{writtenBy,keyLastUsedAt,previousKeyLastUsedAt,version}'::text[]`;
    const rows = await db.prisma.$queryRawUnsafe<{ r: unknown }[]>(
      `SELECT ${columns} AS r FROM ${q(table)} t ORDER BY ${key.map((c) => `t.${q(c)}`).join(", ")}`,
    );
    all[table] = rows.map((x) => x.r);
  }
  return all;
}

beforeAll(async () => {
  receiver = await startReceiver();
  embedded = spawnService({ DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "", ...FAST_WEBHOOKS });
  const url = `http://127.0.0.1:${await embedded.port()}`;
  firstKey = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(embedded.output())![1]!;
  const user = await onEmbedded(["user", "create", "user-B"]);
  expect(user.code, user.stderr).toBe(0);
  keyB = user.stdout.trim();
  const hook = await onEmbedded(["webhook", "add", receiver.url]);
  expect(hook.code, hook.stderr).toBe(0);
  secret = hook.stdout.trim().split("\n")[1]!;
  expect((await onEmbedded(["seed"])).code).toBe(0);
  const players = (await request(url).get("/api/player/get-all-players").set("X-API-Key", keyB).expect(200)).body as { id: number }[];
  await request(url).post("/api/website/create-reward-log").set("X-API-Key", firstKey).send({ playerId: players[0]!.id, rewardId: 7 }).expect(201);
  await receiver.waitFor("the reward's event", () => receiver.received.some((r) => r.body.includes('"rewardId":7')));
}, 120_000);
afterAll(async () => {
  await embedded?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a backup beside the embedded server, and the move to PostgreSQL", () => {
  it("when `backup` runs while the embedded server serves, then the server makes it through the control channel, and `restore --check` finds it whole", async () => {
    const backup = await onEmbedded(["backup", file]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/^Backed up to .*community\.backup in [\d.]+ s: 2 api_users, 5 players, .*1 webhook_endpoints/);
    await embedded.waitFor("the server's line", () =>
      embedded.lines().some((l) => l.msg === "CLI command through the control channel" && l.command === "backup"),
    );
    backedUp = backup.stdout.split(": ")[1]!;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const checked = await onEmbedded(["restore", "--check", file]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain(`is whole (made `);
    expect(checked.stdout.split("\n")[0]!.split(": ")[1]).toBe(backedUp.trimEnd());
    // What the restore would install that grants access or sends data out, as the operator should review it.
    expect(checked.stdout).toMatch(
      /\nA restore would install 2 API user\(s\): user-A \(group A\), user-B \(group B\); 1 webhook endpoint\(s\): \d+ → http:\/\/127\.0\.0\.1:\d+\/hook \(every event\)\.\n$/,
    );
    // The server still serves, and it refuses a restore into its own database, which holds data.
    const refused = await onEmbedded(["restore", file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^The database already holds data \(api_users, players/);
    const unwritable = await onEmbedded(["backup", path.join(dir, "no-such-folder", "x.backup")]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/^Cannot write .*x\.backup: ENOENT: no such file or directory, open '/);
    // Into a new data folder, as docs/OPERATIONS.md shows (DATA_DIR=./data-restored): the CLI opens it and migrates it first.
    const restored = await cli(["restore", file], { DATA_DIR: path.join(dir, "data-restored"), DATABASE_URL: "", DATABASE_READ_URL: "" });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout.split(": ")[1]).toBe(backedUp);
  }, 60_000);

  it.runIf(onPostgres)(
    "when the backup is restored into PostgreSQL and two instances start on it, then old keys answer 200 on both, the webhook delivers signed with its old secret, and audit and data are equal",
    async () => {
      expect(backedUp).toBeDefined();
      const server = await createServerDatabase();
      const instances: ServiceProcess[] = [];
      try {
        const restored = await cli(["restore", file], { DATABASE_URL: server.url });
        expect(restored.code, restored.stderr).toBe(0);
        expect(restored.stdout.split(": ")[1]).toBe(backedUp);
        await embedded.stop();
        const before = openDatabase({ kind: "embedded", dataDir, command: "test" });
        const after = openDatabase({ kind: "postgres", url: server.url, poolMax: 2 });
        try {
          expect(await everything(after)).toEqual(await everything(before));
        } finally {
          await before.close();
          await after.close();
        }
        for (let i = 0; i < 2; i++) instances.push(spawnService({ DATABASE_URL: server.url, DATABASE_READ_URL: "", ...FAST_WEBHOOKS }));
        const urls = await Promise.all(instances.map(async (s) => `http://127.0.0.1:${await s.port()}`));
        for (const url of urls) {
          for (const key of [firstKey, keyB]) await request(url).get("/api/player/get-all-players").set("X-API-Key", key).expect(200);
        }
        expect(instances.every((s) => !/First start: created/.test(s.output()))).toBe(true);
        const players = (await request(urls[1]!).get("/api/player/get-all-players").set("X-API-Key", keyB).expect(200)).body as { id: number }[];
        await request(urls[1]!).post("/api/website/create-reward-log").set("X-API-Key", firstKey).send({ playerId: players[0]!.id, rewardId: 8 }).expect(201);
        await receiver.waitFor("the reward's event from PostgreSQL", () => receiver.received.some((r) => r.body.includes('"rewardId":8')));
        const delivery = receiver.received.find((r) => r.body.includes('"rewardId":8'))!;
        expect(() => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
      } finally {
        await Promise.all(instances.map((s) => s.stop()));
        await server.drop();
      }
    },
    120_000,
  );
});
