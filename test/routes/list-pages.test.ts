import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = await t.key("user-A");
  await t.database.db.prisma.$executeRawUnsafe(`
    INSERT INTO players (pseudo, token, ip, "gradeId") SELECT 'paged' || g, 't', '198.51.100.7', g % 4 FROM generate_series(1, 1200) AS g`);
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const fetchList = (url: string) => fetch(url, { headers: { "X-API-Key": key } });

/** The URL of the Link header's rel="next", resolved against the URL asked, as RFC 8288 says. */
function nextOf(res: Response, asked: string): string | undefined {
  const link = res.headers.get("link");
  if (!link) return undefined;
  const match = /^<([^>]*)>; rel="next"$/.exec(link);
  expect(match).not.toBeNull();
  return new URL(match![1]!, asked).toString();
}

/** Follows the pages from `first`; returns each page's rows and headers. */
async function walk(first: string, between: () => Promise<void> = () => Promise.resolve()) {
  const pages: { rows: { id: number; gradeId?: number }[]; token: string | null }[] = [];
  for (let url: string | undefined = first; url !== undefined; ) {
    const res = await fetchList(url);
    expect(res.status).toBe(200);
    pages.push({ rows: (await res.json()) as { id: number }[], token: res.headers.get("sync-token") });
    url = nextOf(res, url);
    await between();
  }
  return pages;
}

describe("pages of a list", () => {
  it("when pages are walked while players are added, then no row is skipped nor repeated, and the last page has no Link", async () => {
    const before = (await prisma().player.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map((p) => p.id);
    let added = 0;
    const pages = await walk(`${t.url}/api/player/get-all-players?limit=97`, async () => {
      // Between pages, another client adds players (their ids come after the cursor, or anywhere for explicit ids).
      await prisma().$executeRawUnsafe(
        `INSERT INTO players (pseudo, token, ip) SELECT 'added' || g || '-' || ${added}, 't', '198.51.100.8' FROM generate_series(1, 5) g`,
      );
      added += 5;
    });
    const ids = pages.flatMap((p) => p.rows.map((r) => r.id));
    for (const page of pages) expect(page.rows.length).toBeLessThanOrEqual(97);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining(before));
    // The walk's token is its first page's, on every page.
    expect(new Set(pages.map((p) => p.token)).size).toBe(1);
    expect(pages[0]!.token).toMatch(/^s2\./);
  });

  it("when a filtered list is paged, then the pages hold exactly the filtered list, in order, with its parameters kept in Link", async () => {
    const pages = await walk(`${t.url}/api/player/get-all-full-players-by-gradeId?gradeId=2&limit=50`);
    const whole = (await (await fetchList(`${t.url}/api/player/get-all-full-players-by-gradeId?gradeId=2`)).json()) as unknown[];
    expect(pages.length).toBe(Math.ceil(whole.length / 50));
    expect(pages.flatMap((p) => p.rows)).toEqual(whole);
  });

  it("when limit covers the whole list, then one page and no Link; when the list is empty, then []", async () => {
    const res = await fetchList(`${t.url}/api/parkour/get-all-maps?limit=1000`);
    expect(res.status).toBe(200);
    expect(res.headers.get("link")).toBeNull();
    expect(await res.json()).toEqual([]);
  });

  it.each([
    ["limit=0", "limit: expected 1 to 1000"],
    ["limit=1001", "limit: expected 1 to 1000"],
    ["limit=ten", "limit: expected an integer"],
    ["limit=5&limit=6", "limit: expected a single value, received array"],
    ["limit=5&cursor=abc", "cursor: not a cursor of this list: send the one from the Link header's next URL unchanged"],
    ["limit=5&cursor=c1.bm90LWEtY3Vyc29y", "cursor: not a cursor of this list: send the one from the Link header's next URL unchanged"],
    [`cursor=c1.${Buffer.from("5:754:0:0:3").toString("base64url")}`, "limit: required with cursor (send the Link header's next URL as it is)"],
    ["since=yesterday", "since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged"],
    // A running transaction at or above the token's start, or none at all, is not one the service wrote.
    [
      `since=s1.${Buffer.from("754:0:0:754").toString("base64url")}`,
      "since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged",
    ],
    [
      `since=s1.${Buffer.from("9223372036854775808:0:0:").toString("base64url")}`,
      "since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged",
    ],
    [
      `limit=1&cursor=c1.${Buffer.from("1:9999999999999999999:0:0:").toString("base64url")}`,
      "cursor: not a cursor of this list: send the one from the Link header's next URL unchanged",
    ],
    [
      `since=s1.${Buffer.from("754:0:0:0").toString("base64url")}`,
      "since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged",
    ],
    [
      `since=s1.${Buffer.from(`754:0:0:${Array(65).fill(1).join(",")}`).toString("base64url")}`,
      "since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged",
    ],
  ])("when %s is sent, then 400 naming the parameter", async (query, message) => {
    const res = await fetchList(`${t.url}/api/player/get-all-players?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 400, message });
  });
});
