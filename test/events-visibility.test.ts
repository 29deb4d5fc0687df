import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../src/events/catalogue.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { openStream, positionsOf, type SseClient } from "./helpers/sse.js";

/**
 * Who sees which event (docs/SECURITY.md, "Who sees which event"), for every
 * caller group and every event type, written here from the rule rather than
 * from the code: a caller sees an event when a route it may call answers the
 * record with every field the event carries; groups A and B (the admin
 * routes') see every event (issue 37).
 */
const SEEN_BY: Record<"A" | "B" | "C" | "D", (type: string, active: boolean) => boolean> = {
  A: () => true,
  B: () => true,
  // get-all-players answers players without their sensitive fields: C reads no player in full.
  C: (type) => /^(cosmetic|parkour_map)\./.test(type),
  // The leaderboards' events carry what get-leaderboard answers (groups A, B, D).
  D: (type, active) => /^(player|cosmetic|infected_stats|leaderboard|season)\./.test(type) || (type.startsWith("temporary_item.") && active),
};
const GROUPS = Object.keys(SEEN_BY) as (keyof typeof SEEN_BY)[];

let t: TestApp;
const keys = {} as Record<keyof typeof SEEN_BY, string>;
let start: string;

const day = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** The data of an event: a temporary item active now or not, or any other record. */
const dataOf = (type: string, n: number, active: boolean) =>
  type.startsWith("temporary_item.") ? { id: String(n), startDate: iso(Date.now() + (active ? -day : day)), endDate: iso(Date.now() + 2 * day) } : { id: n };

beforeAll(async () => {
  t = await startTestApp();
  for (const group of GROUPS) keys[group] = await t.key(`user-${group}`);
  // The resume point: an event of the test's own, received, so that it comes after the keys' creations
  // (a stream from now may start before events committed a moment earlier that no instance has read yet,
  // when another transaction still ran then: it gets them, as it must, and they are not this test's).
  const s = await openStream(t.url, keys.A);
  await s.waitFor("the position", () => s.lastId !== "");
  await t.database.db.prisma.$executeRaw`INSERT INTO webhook_events (type, data) VALUES ('cosmetic.updated', '{"id":-2}')`;
  t.events.announce();
  await s.waitFor("the resume point", () => s.events.some((e) => e.data.includes('"id":-2')));
  start = s.events.find((e) => e.data.includes('"id":-2'))!.id;
  await s.close();
  // Every type once; temporary items twice, inside their dates and not; then a marker every group sees.
  const events = EVENT_TYPES.flatMap((type, i) => [
    { type, data: dataOf(type, i, true) },
    ...(type.startsWith("temporary_item.") ? [{ type, data: dataOf(type, 1000 + i, false) }] : []),
  ]);
  events.push({ type: "cosmetic.updated", data: { id: -1 } });
  await t.database.db.prisma.$executeRaw`
    INSERT INTO webhook_events (type, data) SELECT e->>'type', e->>'data' FROM jsonb_array_elements(${JSON.stringify(events.map((e) => ({ type: e.type, data: JSON.stringify(e.data) })))}::jsonb) e`;
});
afterAll(async () => {
  await t.close();
});

/** What a stream of this group, resuming from before the events, gets: each event's type and whether it was active. */
async function received(group: keyof typeof SEEN_BY, query = ""): Promise<{ type: string; active: boolean }[]> {
  const s: SseClient = await openStream(t.url, keys[group], query, { "Last-Event-ID": start });
  try {
    expect(s.status).toBe(200);
    await s.waitFor("the marker", () => s.events.some((e) => e.data.includes('"id":-1')));
    return s.events
      .map((e) => JSON.parse(e.data) as { type: string; data: { id: number | string; startDate?: string } })
      .filter((e) => e.data.id !== -1)
      .map((e) => ({ type: e.type, active: e.data.startDate === undefined || Date.parse(e.data.startDate) <= Date.now() }));
  } finally {
    await s.close();
  }
}

describe("GET /api/events: who sees which event", () => {
  it.each(GROUPS)("when a caller of group %s streams every type it may, then it gets exactly the events the rule gives it", async (group) => {
    const got = await received(group);
    const expected = EVENT_TYPES.flatMap((type) => [
      ...(SEEN_BY[group](type, true) ? [{ type, active: true }] : []),
      ...(type.startsWith("temporary_item.") && SEEN_BY[group](type, false) ? [{ type, active: false }] : []),
    ]);
    expect(got).toEqual(expected);
  });

  it.each(GROUPS)("when a caller of group %s asks for a type the rule does not give it, then 403 naming it", async (group) => {
    const refused = EVENT_TYPES.filter((type) => !SEEN_BY[group](type, true));
    for (const type of refused) {
      const s = await openStream(t.url, keys[group], `types=${type}`);
      expect(s.status).toBe(403);
      expect(JSON.parse(s.body).message).toMatch(new RegExp(`^types: this API user may not subscribe to ${type.replace(".", "\\.")} `));
    }
    for (const type of EVENT_TYPES.filter((type) => SEEN_BY[group](type, true))) {
      const s = await openStream(t.url, keys[group], `types=${type}`);
      expect(s.status).toBe(200);
      await s.close();
    }
  });

  it("when a stream asks for one type, then it gets that type alone, temporary items outside their dates only for groups A and B", async () => {
    const items = EVENT_TYPES.filter((type) => type.startsWith("temporary_item."));
    // With the marker's type, and the cosmetic events before it.
    const query = `types=${items.join(",")},cosmetic.updated`;
    const itemsOf = async (group: "B" | "D") => (await received(group, query)).filter((e) => e.type !== "cosmetic.updated");
    expect(await itemsOf("D")).toEqual(items.map((type) => ({ type, active: true })));
    expect(await itemsOf("B")).toEqual(
      items.flatMap((type) => [
        { type, active: true },
        { type, active: false },
      ]),
    );
  });
});

describe("GET /api/events: what ids tell", () => {
  it("when nothing a caller may see happens, then each heartbeat still carries a new id, for the same position", async () => {
    const s = await openStream(t.url, keys.C, "types=parkour_map.created");
    try {
      await s.waitFor("the position", () => s.lastId !== "");
      const ids = [s.lastId];
      await s.waitFor(
        "two heartbeats",
        () => {
          if (s.lastId !== ids.at(-1)) ids.push(s.lastId);
          return ids.length === 3;
        },
        30_000,
      );
      expect(new Set(ids).size).toBe(3);
      const [a, b, c] = await positionsOf(t.database.db, ids);
      expect(b).toEqual(a);
      expect(c).toEqual(a);
      expect(s.comments.filter((c) => c === "heartbeat")).toHaveLength(2);
    } finally {
      await s.close();
    }
  }, 40_000);

  it("when events follow one another, then their ids do not show how many came between", async () => {
    const s = await openStream(t.url, keys.C, "types=cosmetic.updated", { "Last-Event-ID": start });
    try {
      await s.waitFor("two events", () => s.events.length >= 2);
      // Opaque: no part of an id counts events (written in the clear, ids 1 and 2 would share all but their end).
      const [first, second] = s.events.map((e) => e.id);
      const common = [...first!].findIndex((ch, i) => ch !== second![i]);
      expect(common).toBeLessThanOrEqual(12);
    } finally {
      await s.close();
    }
  });
});
