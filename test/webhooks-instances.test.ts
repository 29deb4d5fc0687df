import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/db/database.js";
import { ApiUsers } from "../src/users/users.js";
import { addEndpoint } from "../src/webhooks/manage.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { type ServiceProcess, spawnService } from "./helpers/process.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * Webhooks delivered by real instances (processes of src/main.ts) sharing one
 * PostgreSQL: each event exactly once to a healthy receiver, whichever
 * instance took the write; an instance killed mid-delivery loses nothing.
 */
const ENV = {
  WEBHOOKS_ALLOW_PRIVATE: "true",
  WEBHOOKS_TIMEOUT_MS: "1000",
  WEBHOOKS_BACKOFF_BASE_MS: "100",
  WEBHOOKS_BACKOFF_MAX_MS: "500",
};

describe.skipIf(!onPostgres)("webhooks across instances on one PostgreSQL", () => {
  let database: { url: string; drop(): Promise<void> };
  let direct: Database;
  let key: string;
  let receiver: Receiver;
  let playerId: number;
  const running: ServiceProcess[] = [];

  async function start(): Promise<string> {
    const service = spawnService({ DATABASE_URL: database.url, ...ENV });
    running.push(service);
    return `http://127.0.0.1:${await service.port()}`;
  }
  const reward = (url: string, rewardId: number) =>
    fetch(`${url}/api/website/create-reward-log`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ playerId, rewardId }),
    });

  beforeAll(async () => {
    database = await createServerDatabase();
    await start(); // migrates the empty database
    direct = openDatabase({ kind: "postgres", url: database.url, poolMax: 2 });
    key = (await new ApiUsers(direct.prisma).create("user-B")).apiKey;
    playerId = (await makePlayer(direct.prisma)).id;
    receiver = await startReceiver();
    await addEndpoint(direct.prisma, { webhooksAllowPrivate: true, webhooksSecretKey: undefined }, { url: receiver.url }, { actor: "test" });
  }, 90_000);

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await receiver?.close();
    await direct?.close();
    await database?.drop();
  });

  it("when two instances take writes, then each event reaches a healthy receiver exactly once", async () => {
    const a = `http://127.0.0.1:${await running[0]!.port()}`;
    const b = await start();
    // 200 writes, 20 at a time, alternating between the instances.
    const statuses: number[] = [];
    for (let i = 0; i < 200; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => reward((i + j) % 2 ? a : b, 1_000 + i + j)));
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses).toEqual(Array(200).fill(201));
    await receiver.waitFor("200 events", () => receiver.delivered().size === 200);
    await new Promise((r) => setTimeout(r, 500)); // a duplicate would show by now
    expect(receiver.received.length).toBe(200);
    expect([...receiver.delivered().values()].every((copies) => copies.length === 1)).toBe(true);
  }, 60_000);

  it("when the instance delivering is killed mid-delivery, then another one delivers the event, with its webhook-id", async () => {
    // One instance left, so that it is the one delivering.
    await running[1]!.stop();
    const only = running[0]!;
    const url = `http://127.0.0.1:${await only.port()}`;
    const before = receiver.received.length;
    receiver.answer = () => "hang";
    expect((await reward(url, 5_000)).status).toBe(201);
    const isHeld = (r: { body: string }) => (JSON.parse(r.body) as { data: { rewardId: number } }).data.rewardId === 5_000;
    await receiver.waitFor("the attempt", () => receiver.received.slice(before).some(isHeld));
    const held = String(receiver.received.slice(before).find(isHeld)!.headers["webhook-id"]);
    // A receiver that never answers does not make the instance unready.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    only.child.kill("SIGKILL");
    await only.exited;
    receiver.answer = () => 200;
    await start();
    await receiver.waitFor("the delivery by the new instance", () => receiver.delivered().has(held), 30_000);
    expect(receiver.delivered().get(held)).toHaveLength(1);
    expect(JSON.parse(receiver.delivered().get(held)![0]!.body)).toMatchObject({ type: "reward_log.created", data: { rewardId: 5_000 } });
  }, 60_000);
});
