import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AddressAllowList } from "../src/auth/address-allow-list.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { openStream, type SseClient } from "./helpers/sse.js";

/**
 * Who a stream's events reach: the key's user, from where it may call
 * (issue 37). Two client addresses: 127.0.0.1 and 127.0.0.2 (both loopback).
 */
let t: TestApp;
let key: string;
const open: SseClient[] = [];

const stream = async (from: string, query = "types=reward_log.created") => {
  const s = await openStream(t.url, key, query, {}, from);
  open.push(s);
  expect(s.status).toBe(200);
  await s.waitFor("the position", () => s.lastId !== "");
  return s;
};
const allow = (list: string | null) => t.users.setAllowedAddresses("roaming", list === null ? null : AddressAllowList.parse(list).list!);

beforeAll(async () => {
  t = await startTestApp({ env: { CALLERS_USER_B: "user-B,roaming" } });
  key = await t.key("roaming");
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await allow(null);
});
afterAll(async () => {
  await t.close();
});

describe("GET /api/events and the user's allowed addresses", () => {
  it("when the user's addresses change to exclude a stream's client, then that stream ends, the others go on, and a new one from there is 403", async () => {
    const here = await stream("127.0.0.1");
    const there = await stream("127.0.0.2");
    await allow("127.0.0.1/32,10.0.0.0/8");
    await there.end;
    await t.database.db.prisma.$executeRaw`INSERT INTO webhook_events (type, data) VALUES ('reward_log.created', '{"n":1}')`;
    t.events.announce();
    await here.waitFor("the event", () => here.events.length === 1);
    expect(here.ended).toBe(false);
    const again = await openStream(t.url, key, "", {}, "127.0.0.2");
    expect(again.status).toBe(403);
    expect(JSON.parse(again.body).message).toBe("This API user may not call the API from this client address");
  });
});
