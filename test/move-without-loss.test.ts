import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/database.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { cliProcess, type ServiceProcess, spawnService } from "./helpers/process.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * docs/OPERATIONS.md, "Move to PostgreSQL", under load: clients write all along, retrying as CALLING.md
 * says (a 503 or a refused connection: the same request again, with the same Idempotency-Key), while the
 * operator freezes writes on the embedded server, backs up, restores into PostgreSQL, stops the old server
 * and starts the new one. Every write acknowledged is in the new database, once; none acknowledged is lost;
 * every reward log announced to the webhook receiver is, in the new database, the row it announced; the
 * old server, started again by mistake, still refuses writes (the freeze is in its database).
 */
const dir = mkdtempSync(path.join(tmpdir(), "move-load-"));
const dataDir = path.join(dir, "data");
const file = path.join(dir, "move.backup");
const WRITERS = 4;

let receiver: Receiver;
let embedded: ServiceProcess | undefined;
let key: string;
let playerId: number;

const cli = (args: string[], env: Record<string, string> = {}) =>
  cliProcess(args, { ...process.env, ...FAST_WEBHOOKS, DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "", ...env });
const urlOf = async (s: ServiceProcess) => `http://127.0.0.1:${await s.port()}`;

interface Acknowledged {
  id: number;
  rewardId: number;
}

/** Writers that retry each reward log until it is acknowledged, against whichever server `target()` names. */
function startWriters(target: () => string | undefined) {
  const acknowledged: Acknowledged[] = [];
  const refused = { frozen: 0, unreachable: 0 };
  const unexpected: string[] = [];
  // Far from the sample's reward ids.
  let next = 100_000;
  let stop = false;
  const writer = async (w: number) => {
    while (!stop) {
      const rewardId = next++;
      const idempotencyKey = `move-${w}-${rewardId}`;
      // A write given up at the stop was never acknowledged: whether it is stored does not matter.
      while (!stop) {
        const url = target();
        const res = url
          ? await fetch(`${url}/api/website/create-reward-log`, {
              method: "POST",
              headers: { "X-API-Key": key, "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
              body: JSON.stringify({ playerId, rewardId }),
            }).catch(() => undefined)
          : undefined;
        if (res?.status === 201) {
          acknowledged.push({ id: ((await res.json()) as { id: number }).id, rewardId });
          break;
        }
        if (res && (res.status !== 503 || res.headers.get("error-name") !== "WRITES_FROZEN" || res.headers.get("retry-after") !== "10")) {
          unexpected.push(`${res.status} ${res.headers.get("error-name")} ${await res.text()}`);
          return;
        }
        if (res) refused.frozen++;
        else refused.unreachable++;
        // The test does not wait the 10 s of Retry-After: how soon the retry comes changes nothing here.
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const running = Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  return {
    acknowledged,
    refused,
    async until(what: string, test: () => boolean) {
      const by = Date.now() + 60_000;
      while (!test()) {
        if (unexpected.length > 0) throw new Error(`unexpected answers: ${unexpected.join("; ")}`);
        if (Date.now() > by) throw new Error(`no ${what} after 60 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      stop = true;
      await running;
      expect(unexpected).toEqual([]);
    },
  };
}

beforeAll(async () => {
  receiver = await startReceiver();
  embedded = spawnService({ DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "", ...FAST_WEBHOOKS });
  await embedded.port();
  key = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(embedded.output())![1]!;
  expect((await cli(["webhook", "add", receiver.url, "--events", "reward_log.created"])).code).toBe(0);
  expect((await cli(["seed"])).code).toBe(0);
  const players = (await (await fetch(`${await urlOf(embedded)}/api/player/get-all-players`, { headers: { "X-API-Key": key } })).json()) as { id: number }[];
  playerId = players[0]!.id;
}, 120_000);
afterAll(async () => {
  await embedded?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a move under load", () => {
  it.runIf(onPostgres)(
    "when writes are frozen for the move's backup, then every acknowledged write is in the new database once, and no announced id names another row",
    async () => {
      const target = await createServerDatabase();
      let current: string | undefined = await urlOf(embedded!);
      const writers = startWriters(() => current);
      let instance: ServiceProcess | undefined;
      try {
        await writers.until("writes on the embedded server", () => writers.acknowledged.length >= 10);
        // 1. Freeze: it returns once the writes in flight have committed; from then on every write is refused.
        const freeze = await cli(["freeze", "--reason", "moving to PostgreSQL"]);
        expect(freeze.code, freeze.stderr).toBe(0);
        const beforeFreeze = writers.acknowledged.length;
        await writers.until("a write refused while frozen", () => writers.refused.frozen >= WRITERS);
        // 2. The final backup, 3. the restore, beside the serving (frozen) server.
        const backup = await cli(["backup", file]);
        expect(backup.code, backup.stderr).toBe(0);
        const restore = await cli(["restore", file], { DATABASE_URL: target.url });
        expect(restore.code, restore.stderr).toBe(0);
        expect(writers.acknowledged.length).toBe(beforeFreeze);
        // 4. The old server stops; started again by mistake, it still refuses writes.
        current = undefined;
        await embedded!.stop();
        embedded = spawnService({ DATA_DIR: dataDir, DATABASE_URL: "", DATABASE_READ_URL: "", ...FAST_WEBHOOKS });
        const frozenSince = writers.refused.frozen;
        current = await urlOf(embedded);
        await writers.until("a refusal from the restarted old server", () => writers.refused.frozen > frozenSince);
        current = undefined;
        await embedded.stop();
        expect(writers.acknowledged.length).toBe(beforeFreeze);
        // 5. The new server on PostgreSQL takes the writes, the same keys and webhook.
        instance = spawnService({ DATABASE_URL: target.url, DATABASE_READ_URL: "", ...FAST_WEBHOOKS });
        current = await urlOf(instance);
        await writers.until("writes on PostgreSQL", () => writers.acknowledged.length >= beforeFreeze + 10);
        await writers.stop();

        const acknowledged = writers.acknowledged;
        await receiver.waitFor("every acknowledged write's event", () => {
          const announced = new Set(receiver.received.map((r) => (JSON.parse(r.body) as { data: { id: number } }).data.id));
          return acknowledged.every((a) => announced.has(a.id));
        });
        const db = openDatabase({ kind: "postgres", url: target.url, poolMax: 1 });
        try {
          const rows = await db.prisma.rewardLog.findMany({ where: { playerId, rewardId: { gt: 0 } }, select: { id: true, rewardId: true } });
          const byId = new Map(rows.map((r) => [r.id, r.rewardId]));
          // Every acknowledged write, with the id it was answered, once (an Idempotency-Key retried wrote once).
          for (const a of acknowledged) expect(byId.get(a.id), `reward log ${a.id}`).toBe(a.rewardId);
          expect(new Set(acknowledged.map((a) => a.rewardId)).size).toBe(acknowledged.length);
          const mine = rows.filter((r) => acknowledged.some((a) => a.rewardId === r.rewardId));
          expect(mine.length).toBe(acknowledged.length);
          // Every announced reward log (the old server's deliveries, the new one's, redeliveries) is that row.
          for (const r of receiver.received) {
            const data = (JSON.parse(r.body) as { data: { id: number; rewardId: number } }).data;
            if (acknowledged.some((a) => a.rewardId === data.rewardId)) expect(byId.get(data.id), `announced ${data.id}`).toBe(data.rewardId);
          }
        } finally {
          await db.close();
        }
      } finally {
        await writers.stop();
        await instance?.stop();
        await target.drop();
      }
    },
    180_000,
  );
});
