import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliProcess, type ServiceProcess, spawnService } from "./helpers/process.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * docs/OPERATIONS.md, "A restore drill", as written: a backup with a webhook endpoint and deliveries still
 * pending, restored into a new data folder with DRILL_MODE=true, and a server started on the copy. The drill's
 * server delivers nothing to the live receiver and writes no counter to production's Redis; a server without
 * DRILL_MODE refuses the copy in one line. The control: the same backup restored without DRILL_MODE, whose
 * server delivers and counts in Redis, as `restore` warns. Real processes, the embedded database.
 */
const redisUrl = process.env.REDIS_TEST_URL;
const dir = mkdtempSync(path.join(tmpdir(), "drill-"));
const file = path.join(dir, "community.backup");
const productionLedger = path.join(dir, "production", "erasures.jsonl");
let receiver: Receiver;
let key: string;
let redis: Redis | undefined;

const cli = (dataDir: string, args: string[], env: Record<string, string> = {}) =>
  cliProcess(args, { ...process.env, ...FAST_WEBHOOKS, DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "", ...env });
/** The environment production's servers run with: its Redis, rate limits on. */
const production = (prefix: string) => ({
  ...FAST_WEBHOOKS,
  DATABASE_URL: "",
  DATABASE_READ_URL: "",
  RATE_LIMIT_PER_MINUTE: "1000",
  ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } : {}),
});
const keysUnder = async (prefix: string) => (redis ? (await redis.keys(`${prefix}*`)).length : 0);

beforeAll(async () => {
  receiver = await startReceiver();
  if (redisUrl) redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis?.connect();
  // Production, stopped: a user, a webhook endpoint, the sample community whose events wait for delivery.
  const source = path.join(dir, "production");
  const user = await cli(source, ["user", "create", "user-A"]);
  // What production's server makes at its start: its erasure ledger, empty (no erasure yet).
  writeFileSync(productionLedger, "");
  expect(user.code, user.stderr).toBe(0);
  key = user.stdout.trim();
  expect((await cli(source, ["webhook", "add", receiver.url])).code).toBe(0);
  expect((await cli(source, ["seed"])).code).toBe(0);
  const backup = await cli(source, ["backup", file]);
  expect(backup.code, backup.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  redis?.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function written(server: ServiceProcess): Promise<void> {
  const url = `http://127.0.0.1:${await server.port()}`;
  const players = (await request(url).get("/api/player/get-all-players").set("X-API-Key", key).expect(200)).body as { id: number }[];
  await request(url).post("/api/website/create-reward-log").set("X-API-Key", key).send({ playerId: players[0]!.id, rewardId: 99 }).expect(201);
}

describe("a restore drill", () => {
  it("when a backup is restored without DRILL_MODE, then restore warns, and a server on it delivers to production's receiver and counts in its Redis", async () => {
    const copy = path.join(dir, "restored");
    const restored = await cli(copy, ["restore", file]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(
      /^Warning: 1 webhook endpoint\(s\) came with the backup: a server started on this database delivers to them .*unless it runs with DRILL_MODE=true\. For a drill, restore with DRILL_MODE=true/,
    );
    const prefix = `drill-control-${randomBytes(4).toString("hex")}:`;
    const server = spawnService({ ...production(prefix), DATA_DIR: copy });
    try {
      await written(server);
      await receiver.waitFor("a delivery from the restored copy", () => receiver.received.length > 0);
      if (redis) expect(await keysUnder(prefix)).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it("when a backup is restored with DRILL_MODE=true, then a server without it refuses the copy in one line, and one with it delivers nothing and writes nothing to Redis", async () => {
    const copy = path.join(dir, "drill");
    // Production's erasure ledger, as OPERATIONS.md's drill names it (the drill's DATA_DIR holds none).
    const restored = await cli(copy, ["restore", file], { DRILL_MODE: "true", ERASURE_LEDGER: productionLedger });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toMatch(/\nThis database is a drill's copy \(DRILL_MODE=true\): a server starts on it only with DRILL_MODE=true/);

    const refused = spawnService({ ...production("unused:"), DATA_DIR: copy });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toMatch(
      /Refused to start: this database is a restore drill's copy \(restored \d{4}-.*Z with DRILL_MODE=true, from a backup made .*\), and its webhooks would deliver to production's receivers: start the server on it with DRILL_MODE=true\.\n/,
    );
    expect(refused.output()).not.toMatch(/^\s+at /m);

    receiver.received.length = 0;
    const prefix = `drill-${randomBytes(4).toString("hex")}:`;
    const server = spawnService({ ...production(prefix), DATA_DIR: copy, DRILL_MODE: "true" });
    try {
      await written(server);
      const drill = server.lines().find((l) => String(l.msg).startsWith("drill mode"));
      expect(drill?.msg).toBe(
        `drill mode (DRILL_MODE=true): no webhook is delivered, rate limits count in this process, reads go to DATABASE_URL${redisUrl ? "; set but not used: REDIS_URL" : ""}`,
      );
      // The deliveries the backup held, and the new write's, wait: none was attempted.
      const deliveries = await cli(copy, ["webhook", "deliveries", "--json", "--limit", "1000"]);
      expect(deliveries.code, deliveries.stderr).toBe(0);
      const rows = deliveries.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { status: string; attempts: number; type: string });
      expect(rows.some((r) => r.type === "reward_log.created")).toBe(true);
      expect(rows.every((r) => r.status === "pending" && r.attempts === 0)).toBe(true);
      expect(receiver.received).toEqual([]);
      expect(await keysUnder(prefix)).toBe(0);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
