import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/database.js";
import { openStream } from "./helpers/sse.js";

/**
 * Event ids are bound to their database (issue 37): after a restore, an id
 * from before is a 410 naming the header, and the stream serves the restored
 * database's new events. A restore is what pg_restore does to what the
 * stream depends on: the sync identity table made anew (a new oid, the same
 * secret), and, into another cluster, events whose transaction ids are past
 * anything that cluster has reached.
 */
let database: TestDatabase;
let before: TestApp;
let key: string;
let oldId: string;

const reward = (db: TestDatabase, n: number) =>
  db.db.prisma.$executeRaw`INSERT INTO webhook_events (type, data) VALUES ('reward_log.created', ${JSON.stringify({ n })})`;
const ns = (events: { data: string }[]) => events.map((e) => (JSON.parse(e.data) as { data: { n: number } }).data.n);

beforeAll(async () => {
  database = await createTestDatabase();
  before = await startTestApp({ database });
  key = await before.key("user-B");
  const s = await openStream(before.url, key, "types=reward_log.created");
  await s.waitFor("the position", () => s.lastId !== "");
  await reward(database, 1);
  before.events.announce();
  await s.waitFor("the event", () => s.events.length === 1);
  oldId = s.events[0]!.id;
  await s.close();
  await before.close();
  // The restore, into another cluster.
  await database.db.prisma.$transaction([
    database.db.prisma.$executeRaw`CREATE TABLE sync_identity_restored (LIKE sync_identity INCLUDING ALL)`,
    database.db.prisma.$executeRaw`INSERT INTO sync_identity_restored SELECT * FROM sync_identity`,
    database.db.prisma.$executeRaw`DROP TABLE sync_identity`,
    database.db.prisma.$executeRaw`ALTER TABLE sync_identity_restored RENAME TO sync_identity`,
    database.db.prisma.$executeRaw`UPDATE webhook_events SET "writtenBy" = "writtenBy" + 1000000000000`,
  ]);
});
afterAll(async () => {
  await database?.drop();
});

describe("GET /api/events after a restore", () => {
  let after: TestApp;
  beforeAll(async () => {
    after = await startTestApp({ database });
  });
  afterAll(async () => {
    await after.close();
  });

  it("when a client resumes with an id from before the restore, then 410 naming Last-Event-ID (or lastEventId)", async () => {
    const byHeader = await openStream(after.url, key, "types=reward_log.created", { "Last-Event-ID": oldId });
    expect(byHeader.status).toBe(410);
    expect(JSON.parse(byHeader.body)).toEqual({
      code: 410,
      message:
        "Last-Event-ID: the stream cannot resume after this event: not from this database (another one, or this one restored from a backup since); reload by sync, then open the stream without it",
    });
    const byQuery = await openStream(after.url, key, `types=reward_log.created&lastEventId=${oldId}`);
    expect(byQuery.status).toBe(410);
    expect(JSON.parse(byQuery.body).message).toMatch(/^lastEventId: the stream cannot resume after this event: not from this database/);
  });

  it("when events are written after the restore, then a stream from now gets them, and a resume from its position gets them again", async () => {
    const s = await openStream(after.url, key, "types=reward_log.created");
    await s.waitFor("the position", () => s.lastId !== "");
    const position = s.lastId;
    await reward(database, 2);
    await reward(database, 3);
    after.events.announce();
    await s.waitFor("two events", () => s.events.length === 2);
    expect(ns(s.events)).toEqual([2, 3]);
    await s.close();
    const resumed = await openStream(after.url, key, "types=reward_log.created", { "Last-Event-ID": position });
    await resumed.waitFor("two events", () => resumed.events.length === 2);
    expect(ns(resumed.events)).toEqual([2, 3]);
    await resumed.close();
    expect(after.logs.lines.some((l) => l.msg === "event outbox: events written by another server's transactions (a restore) put before every new one")).toBe(
      true,
    );
  });

  it("when an id is altered, then 400 naming the header; one of the format before ids were sealed, 410", async () => {
    const s = await openStream(after.url, key, "types=reward_log.created");
    await s.waitFor("the position", () => s.lastId !== "");
    const id = s.lastId;
    await s.close();
    const altered = `${id.slice(0, 20)}${id[20] === "A" ? "B" : "A"}${id.slice(21)}`;
    const bad = await openStream(after.url, key, "types=reward_log.created", { "Last-Event-ID": altered });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toBe("Last-Event-ID: not an id this stream sent; send the last one received unchanged");
    const unsealed = await openStream(after.url, key, "types=reward_log.created", { "Last-Event-ID": "00000000000002f1000000000000004a" });
    expect(unsealed.status).toBe(410);
    expect(JSON.parse(unsealed.body).message).toMatch(
      /^Last-Event-ID: the stream cannot resume after this event: an id of the format given before ids were sealed/,
    );
  });
});
