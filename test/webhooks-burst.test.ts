import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyCache } from "../src/auth/key-cache.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { addEndpoint } from "../src/webhooks/manage.js";
import { DeliveryWorker } from "../src/webhooks/worker.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { FAST_WEBHOOKS, type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * Webhooks under load, in one process: a burst of the API's writes, each
 * announced, delivered by the real worker to a real receiver on 127.0.0.1.
 * A file of its own: on the embedded database it takes a CPU core for about
 * twenty seconds (webhooks.test.ts has the rest of the delivery's behaviour).
 */

let t: TestApp;
let key: string;
let receiver: Receiver;
let worker: DeliveryWorker | undefined;

beforeAll(async () => {
  // Keys cached, as the service does (server.ts): a write costs no lookup of its key.
  t = await startTestApp({ env: FAST_WEBHOOKS, keyCache: new KeyCache() });
  key = await t.key("user-A");
  receiver = await startReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t?.close();
});

describe("webhooks under a burst of writes", () => {
  it("when 1,000 writes come in a burst, then all 1,000 events arrive", async () => {
    const config = loadConfig({ NODE_ENV: "test", ...FAST_WEBHOOKS });
    await addEndpoint(t.database.db.prisma, config, { url: receiver.url, events: ["reward_log.created"] }, { actor: "test" });
    worker = new DeliveryWorker(t.database.db, config, createLogger("silent"));
    void worker.start();
    const player = await makePlayer(t.database.db.prisma);
    const ids = Array.from({ length: 1000 }, (_, i) => 10_000 + i);
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids
          .slice(i, i + 25)
          .map((rewardId) => request(t.url).post("/api/website/create-reward-log").set("X-API-Key", key).send({ playerId: player.id, rewardId }).expect(201)),
      );
    }
    await receiver.waitFor("1000 events", () => receiver.delivered().size === 1000, 120_000);
    const rewards = new Set([...receiver.delivered().values()].map((r) => (JSON.parse(r[0]!.body) as { data: { rewardId: number } }).data.rewardId));
    expect(rewards).toEqual(new Set(ids));
  }, 180_000);
});
