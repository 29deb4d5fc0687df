import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/db/database.js";
import { ApiUsers } from "../src/users/users.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { type ServiceProcess, spawnService } from "./helpers/process.js";
import { openStream, type SseClient, strictlyIncreasing } from "./helpers/sse.js";

/**
 * GET /api/events on real instances (processes of src/main.ts) sharing one
 * PostgreSQL: a write through one reaches the streams of the other; a client
 * that resumes on another instance, after a dropped connection or a killed
 * instance, gets every event once, in order.
 */
describe.skipIf(!onPostgres)("event streams across instances on one PostgreSQL", () => {
  let database: { url: string; drop(): Promise<void> };
  let direct: Database;
  let key: string;
  let playerId: number;
  const running: ServiceProcess[] = [];
  const streams: SseClient[] = [];
  let nextReward = 1;

  async function start(): Promise<string> {
    const service = spawnService({ DATABASE_URL: database.url, EVENTS_STREAMS_PER_USER: "20" });
    running.push(service);
    return `http://127.0.0.1:${await service.port()}`;
  }
  const reward = async (url: string, rewardId = nextReward++) => {
    const res = await fetch(`${url}/api/website/create-reward-log`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ playerId, rewardId }),
    });
    expect(res.status).toBe(201);
    return rewardId;
  };
  const stream = async (url: string, headers: Record<string, string> = {}) => {
    const s = await openStream(url, key, "types=reward_log.created", headers);
    streams.push(s);
    expect(s.status, s.body).toBe(200);
    await s.waitFor("the position", () => s.lastId !== "");
    return s;
  };
  const rewardIds = (s: SseClient) => s.events.map((e) => (JSON.parse(e.data) as { data: { rewardId: number } }).data.rewardId);

  beforeAll(async () => {
    database = await createServerDatabase();
    await start(); // migrates the empty database
    await start();
    direct = openDatabase({ kind: "postgres", url: database.url, poolMax: 2 });
    key = (await new ApiUsers(direct.prisma).create("user-B")).apiKey;
    playerId = (await makePlayer(direct.prisma)).id;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await Promise.all(running.map((s) => s.stop()));
    await direct?.close();
    await database?.drop();
  });

  it("when a write commits through one instance, then the streams of the other get it", async () => {
    const [a, b] = await Promise.all(running.slice(0, 2).map(async (s) => `http://127.0.0.1:${await s.port()}`));
    const onB = await stream(b!);
    const onA = await stream(a!);
    const written = [await reward(a!), await reward(b!), await reward(a!)];
    await onB.waitFor("three events", () => onB.events.length === 3);
    await onA.waitFor("three events", () => onA.events.length === 3);
    expect(rewardIds(onB)).toEqual(written);
    // Both instances send the same ids: a position means the same on each.
    expect(onB.events.map((e) => e.id)).toEqual(onA.events.map((e) => e.id));
  });

  it("when a connection drops mid-stream and more is written, then resuming on the other instance gives every event once", async () => {
    const [a, b] = await Promise.all(running.slice(0, 2).map(async (s) => `http://127.0.0.1:${await s.port()}`));
    const first = await stream(a!);
    // Writes from both instances, 10 at a time, while the client reads.
    const written: number[] = [];
    const burst = async () => {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, i) => reward(i % 2 ? a! : b!)));
      written.push(...batch);
    };
    await burst();
    await burst();
    await first.waitFor("some events", () => first.events.length >= 5);
    await first.close();
    const had = rewardIds(first);
    await burst();
    await burst();
    const resumed = await stream(b!, { "Last-Event-ID": first.lastId });
    await resumed.waitFor("every event", () => had.length + resumed.events.length >= written.length);
    await new Promise((r) => setTimeout(r, 300)); // a repeat would show by now
    const all = [...had, ...rewardIds(resumed)];
    expect(all).toHaveLength(written.length);
    expect(new Set(all)).toEqual(new Set(written));
  });

  it("when an instance holding streams is killed (SIGKILL) during writes, then its clients resume on another and miss nothing", async () => {
    const survivor = `http://127.0.0.1:${await running[0]!.port()}`;
    const doomed = running[1]!;
    const doomedUrl = `http://127.0.0.1:${await doomed.port()}`;
    const clients = [await stream(doomedUrl), await stream(doomedUrl), await stream(doomedUrl)];
    const received = clients.map(() => [] as number[]);
    const written: number[] = [];
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const batch = await Promise.all(Array.from({ length: 5 }, () => reward(survivor)));
        written.push(...batch);
      }
    })();
    await clients[0]!.waitFor("events before the kill", () => clients.every((c) => c.events.length >= 10));
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    await Promise.all(clients.map((c) => c.end));
    // Each client reconnects to the survivor with the last id it had (what its connection delivered whole).
    const resumed = await Promise.all(clients.map((c) => stream(survivor, { "Last-Event-ID": c.lastId })));
    await new Promise((r) => setTimeout(r, 500));
    writing = false;
    await writer;
    for (const [i, c] of clients.entries()) {
      const r = resumed[i]!;
      await r.waitFor("every event", () => rewardIds(c).length + r.events.length >= written.length, 15_000);
      received[i] = [...rewardIds(c), ...rewardIds(r)];
      // In the stream's order, across the two instances.
      expect(
        await strictlyIncreasing(
          direct,
          [...c.events, ...r.events].map((e) => e.id),
        ),
      ).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const got of received) {
      expect(got).toHaveLength(written.length);
      expect(new Set(got)).toEqual(new Set(written));
    }
  }, 60_000);
});
