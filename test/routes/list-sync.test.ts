import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { onPostgres } from "../helpers/database.js";
import { makePlayer } from "../helpers/fixtures.js";

const HOUR = 3_600_000;
let now = new Date("2026-11-22T12:00:00Z");
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ now: () => now });
  key = await t.key("user-A");
  await t.database.db.prisma.$executeRawUnsafe(`
    INSERT INTO players (pseudo, token, ip, "gradeId") SELECT 'synced' || g, 't', '198.51.100.9', g % 3 FROM generate_series(1, 300) AS g`);
});
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
type Row = { id: number | string; [field: string]: unknown };

async function list(path: string, since?: string): Promise<{ rows: Row[]; token: string }> {
  const url = new URL(`${t.url}/api${path}`);
  if (since !== undefined) url.searchParams.set("since", since);
  const res = await fetch(url, { headers: { "X-API-Key": key } });
  expect(res.status).toBe(200);
  const token = res.headers.get("sync-token");
  expect(token).toMatch(/^s2\./);
  return { rows: (await res.json()) as Row[], token: token! };
}

const ids = (rows: Row[]) => rows.map((r) => r.id);

describe("sync by change", () => {
  it("when rows were inserted and changed after a list, then since its token returns those rows and a new token; then nothing", async () => {
    const { token } = await list("/player/get-all-players");
    const changed = await prisma().player.update({ where: { pseudo: "synced7" }, data: { credit: 70 } });
    const added = await makePlayer(prisma());
    const sync = await list("/player/get-all-players", token);
    expect(ids(sync.rows)).toEqual([changed.id, added.id]);
    expect(sync.rows.find((r) => r.id === changed.id)).toMatchObject({ credit: 70 });
    expect(sync.token).not.toBe(token);
    expect((await list("/player/get-all-players", sync.token)).rows).toEqual([]);
  });

  it("when a player leaves the grade of a filtered list, then its sync sends the player with its new grade", async () => {
    const { rows, token } = await list("/player/get-all-full-players-by-gradeId?gradeId=1");
    const leaving = rows[0]!;
    await prisma().player.update({ where: { id: Number(leaving.id) }, data: { gradeId: 2 } });
    const sync = await list("/player/get-all-full-players-by-gradeId?gradeId=1", token);
    expect(sync.rows.find((r) => r.id === leaving.id)).toMatchObject({ gradeId: 2 });
  });

  it("when an item's start passes with no write, then the next sync of the active items sends it", async () => {
    const item = await prisma().temporaryItem.create({
      data: {
        itemName: "soon",
        itemDescription: "starts in an hour",
        price: 5,
        startDate: new Date(now.getTime() + HOUR),
        endDate: new Date(now.getTime() + 3 * HOUR),
      },
    });
    const { rows, token } = await list("/temporary-item/get-active-items");
    expect(ids(rows)).not.toContain(String(item.id));
    now = new Date(now.getTime() + 2 * HOUR);
    const sync = await list("/temporary-item/get-active-items", token);
    expect(ids(sync.rows)).toContain(String(item.id));
    // Already sent: the next sync has it no more (its start is before the new token).
    expect(ids((await list("/temporary-item/get-active-items", sync.token)).rows)).not.toContain(String(item.id));
  });

  it("when a sync is paged, then every page carries the walk's first token, and the pages hold every row changed since", async () => {
    const { token } = await list("/player/get-all-players");
    await prisma().player.updateMany({ where: { gradeId: 0 }, data: { vote: { increment: 1 } } });
    const changed = (await prisma().player.findMany({ where: { gradeId: 0 }, select: { id: true } })).map((p) => p.id);
    const tokens = new Set<string>();
    const got: Row[] = [];
    for (let url: string | undefined = `${t.url}/api/player/get-all-players?limit=40&since=${token}`; url; ) {
      const res = await fetch(url, { headers: { "X-API-Key": key } });
      got.push(...((await res.json()) as Row[]));
      tokens.add(res.headers.get("sync-token")!);
      const link = res.headers.get("link");
      url = link ? new URL(/^<([^>]*)>/.exec(link)![1]!, url).toString() : undefined;
    }
    expect(tokens.size).toBe(1);
    expect(ids(got)).toEqual(expect.arrayContaining(changed));
  });

  it("when rows of the list were deleted after a token, then since it answers 410: the client takes the full list again", async () => {
    const map = await prisma().parkourMap.create({ data: { name: "doomed" } });
    const { token } = await list("/parkour/get-all-maps");
    await prisma().parkourMap.delete({ where: { id: map.id } });
    const res = await fetch(`${t.url}/api/parkour/get-all-maps?since=${token}`, { headers: { "X-API-Key": key } });
    expect(res.status).toBe(410);
    expect(await res.json()).toEqual({
      code: 410,
      message: "since: rows of this list were deleted after this token was given; take the full list again, without since",
    });
    const fresh = await list("/parkour/get-all-maps");
    expect((await list("/parkour/get-all-maps", fresh.token)).rows).toEqual([]);
  });

  it.runIf(onPostgres)(
    "when a transaction elsewhere on the server stays open across a deletion, then the fresh list's token is answered, not 410 again",
    async () => {
      // The open transaction holds every snapshot's xmin below the deletion: a token compared by transaction id would stay 410 until it ended.
      const idle = new pg.Client({ connectionString: t.database.url });
      await idle.connect();
      try {
        await idle.query("BEGIN");
        await idle.query("SELECT pg_current_xact_id()");
        const map = await prisma().parkourMap.create({ data: { name: "short-lived" } });
        await prisma().parkourMap.delete({ where: { id: map.id } });
        const fresh = await list("/parkour/get-all-maps");
        expect(ids(fresh.rows).map(String)).not.toContain(String(map.id));
        // The token names the open transaction rather than starting below it: nothing already sent comes again.
        expect((await list("/parkour/get-all-maps", fresh.token)).rows).toEqual([]);
      } finally {
        await idle.end();
      }
    },
  );
});

describe("tokens and cursors bound to their database", () => {
  const get = (path: string, apiKey = key, base = t.url) => fetch(`${base}/api${path}`, { headers: { "X-API-Key": apiKey } });
  const message = async (res: Response) => ((await res.json()) as { message: string }).message;
  /** The token with one part of its sync point changed (from, deletions, at, running), its seal kept. */
  function altered(token: string, part: number, change: (value: string) => string): string {
    const dot = token.lastIndexOf(".");
    const [database, ...point] = Buffer.from(token.slice(3, dot), "base64url").toString().split(":");
    point[part] = change(point[part]!);
    return `${token.slice(0, 3)}${Buffer.from([database, ...point].join(":")).toString("base64url")}${token.slice(dot)}`;
  }

  it("when a token's transaction id is lowered, then 400: the service did not give it", async () => {
    await makePlayer(prisma());
    const { token } = await list("/player/get-all-players");
    const forged = altered(token, 0, (from) => String(BigInt(from) - 50n));
    const res = await get(`/player/get-all-players?since=${forged}`);
    expect(res.status).toBe(400);
    expect(await message(res)).toBe("since: not a sync token: send the Sync-Token header of an earlier answer of this list unchanged");
  });

  it("when a token claims more deletions, or a cursor another row, then 400", async () => {
    const { token } = await list("/parkour/get-all-maps");
    const more = await get(`/parkour/get-all-maps?since=${altered(token, 1, (n) => String(BigInt(n) + 1n))}`);
    expect(more.status).toBe(400);
    const page = await get("/player/get-all-players?limit=2");
    const next = new URL(/<([^>]+)>/.exec(page.headers.get("link")!)![1]!, `${t.url}/api/player/`);
    const cursor = next.searchParams.get("cursor")!;
    const dot = cursor.lastIndexOf(".");
    const [database, after, ...point] = Buffer.from(cursor.slice(3, dot), "base64url").toString().split(":");
    const moved = `c2.${Buffer.from([database, Number(after) + 5, ...point].join(":")).toString("base64url")}${cursor.slice(dot)}`;
    const res = await get(`/player/get-all-players?limit=2&cursor=${moved}`);
    expect(res.status).toBe(400);
    expect(await message(res)).toBe("cursor: not a cursor of this list: send the one from the Link header's next URL unchanged");
    // The cursor as given still works.
    expect((await get(`/player/get-all-players?limit=2&cursor=${cursor}`)).status).toBe(200);
  });

  it("when a token or cursor comes from another database, then 410 both ways, and its own database still answers it", async () => {
    const other = await startTestApp();
    try {
      const otherKey = await other.key("user-A");
      const mine = await list("/player/get-all-players");
      const theirs = (await get("/player/get-all-players", otherKey, other.url)).headers.get("sync-token")!;
      const here = await get(`/player/get-all-players?since=${theirs}`);
      expect(here.status).toBe(410);
      expect(await message(here)).toBe(
        "since: this token is not from this database (another database, or this one restored from a backup since); take the full list again, without since",
      );
      expect((await get(`/player/get-all-players?since=${mine.token}`, otherKey, other.url)).status).toBe(410);
      const theirPage = await get("/player/get-all-players?limit=1", otherKey, other.url);
      await makePlayer(other.database.db.prisma);
      await makePlayer(other.database.db.prisma);
      const link = (await get("/player/get-all-players?limit=1", otherKey, other.url)).headers.get("link")!;
      const cursor = new URL(/<([^>]+)>/.exec(link)![1]!, "http://x/api/player/").searchParams.get("cursor")!;
      expect(theirPage.status).toBe(200);
      const page = await get(`/player/get-all-players?limit=1&cursor=${cursor}`);
      expect(page.status).toBe(410);
      expect(await message(page)).toMatch(/^cursor: this cursor is not from this database .*; walk the list again from its first page, without cursor$/);
      expect((await list("/player/get-all-players", mine.token)).rows).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("when a token of the unsealed format (s1., before 2026-11-25) comes, then 410 once, and the list's new token works", async () => {
    const old = `s1.${Buffer.from("754:0:1764000000000:").toString("base64url")}`;
    const res = await get(`/player/get-all-players?since=${old}`);
    expect(res.status).toBe(410);
    expect(await message(res)).toBe("since: this token was given before tokens were bound to their database; take the full list again, without since");
    const { token } = await list("/player/get-all-players");
    expect((await list("/player/get-all-players", token)).rows).toEqual([]);
    const oldCursor = `c1.${Buffer.from("5:754:0:1764000000000:").toString("base64url")}`;
    expect((await get(`/player/get-all-players?limit=2&cursor=${oldCursor}`)).status).toBe(410);
  });

  it("when the database is restored from a backup (pg_dump, pg_restore --clean: its identity table made anew, secret and all), then tokens given before are 410", async () => {
    const { token } = await list("/parkour/get-all-maps");
    if (onPostgres) {
      // OPERATIONS.md's backup and restore, as written there.
      const file = path.join(mkdtempSync(path.join(tmpdir(), "restore-")), "community.dump");
      for (const [command, args] of [
        ["pg_dump", ["--format=custom", `--file=${file}`, t.database.url!]],
        ["pg_restore", ["--clean", "--if-exists", "--no-owner", `--dbname=${t.database.url!}`, file]],
      ] as const) {
        const run = spawnSync(command, args, { encoding: "utf8" });
        expect(run.status, `${command}: ${run.stderr}`).toBe(0);
      }
    } else {
      // What pg_restore --clean does to the table: drops it and creates it again with the dumped row (a new oid).
      await prisma().$transaction([
        prisma().$executeRawUnsafe(`CREATE TEMP TABLE kept AS SELECT * FROM sync_identity`),
        prisma().$executeRawUnsafe(`DROP TABLE sync_identity CASCADE`),
        prisma().$executeRawUnsafe(`CREATE TABLE sync_identity (id SMALLINT NOT NULL DEFAULT 1 PRIMARY KEY, secret BYTEA NOT NULL)`),
        prisma().$executeRawUnsafe(`INSERT INTO sync_identity SELECT * FROM kept`),
        prisma().$executeRawUnsafe(`DROP TABLE kept`),
      ]);
    }
    const res = await get(`/parkour/get-all-maps?since=${token}`);
    expect(res.status).toBe(410);
    const fresh = await list("/parkour/get-all-maps");
    expect((await list("/parkour/get-all-maps", fresh.token)).rows).toEqual([]);
  });
});

/**
 * Writers whose transactions commit out of order: each takes its transaction id first (pg_current_xact_id
 * assigns it, as a write to any table would), then waits a random while (on PostgreSQL, on connections of
 * its own) before writing players and committing, so a transaction begun earlier often commits after later
 * ones were already read by a sync. (Writes to players queue on the table's version row from their first
 * statement to their commit, so the gap is between taking the id and writing.) On PGlite,
 * with its one connection, the transactions run one after another (a sync waits for the one open):
 * the loop then checks that syncs interleaved between writes lose nothing.
 */
async function writers(count: number, rounds: number): Promise<void> {
  const maxHoldMs = onPostgres ? 150 : 10;
  const ids = (await prisma().player.findMany({ select: { id: true } })).map((p) => p.id);
  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  const round = async (run: (sql: string) => Promise<unknown>, w: number, r: number) => {
    await run("BEGIN");
    await run("SELECT pg_current_xact_id()::text");
    await new Promise((resolve) => setTimeout(resolve, Math.random() * maxHoldMs));
    await run(`UPDATE players SET credit = credit + 1, status = 'w${w}r${r}' WHERE id = ${pick()}`);
    if (r % 3 === 0) await run(`INSERT INTO players (pseudo, token, ip) VALUES ('writer${w}-${r}', 't', '198.51.100.10')`);
    await run("COMMIT");
  };
  await Promise.all(
    Array.from({ length: count }, async (_, w) => {
      if (onPostgres) {
        const client = new pg.Client({ connectionString: t.database.url });
        await client.connect();
        try {
          for (let r = 0; r < rounds; r++) await round((sql) => client.query(sql), w, r);
        } finally {
          await client.end();
        }
      } else {
        for (let r = 0; r < rounds; r++) {
          await prisma().$transaction(async (tx) => {
            await round((sql) => (sql === "BEGIN" || sql === "COMMIT" ? Promise.resolve() : tx.$queryRawUnsafe(sql)), w, r);
          });
        }
      }
    }),
  );
}

describe("a cache kept by syncs while 8 writers commit out of order", () => {
  it("when a transaction begun first commits after a later one was read, then the next sync still sends its row", async () => {
    if (!onPostgres) return; // PGlite has one connection: two transactions cannot be open at once.
    const [first, second] = [new pg.Client({ connectionString: t.database.url }), new pg.Client({ connectionString: t.database.url })];
    await first.connect();
    await second.connect();
    try {
      const { token } = await list("/player/get-all-players");
      const [a, b] = (await prisma().player.findMany({ take: 2, orderBy: { id: "asc" } })).map((p) => p.id);
      // The first transaction takes its id, the second writes and commits, a sync reads it; only then does the first write and commit.
      await first.query("BEGIN");
      await first.query("SELECT pg_current_xact_id()::text");
      await second.query(`UPDATE players SET credit = 1002 WHERE id = ${b}`);
      const early = await list("/player/get-all-players", token);
      expect(early.rows.find((r) => r.id === b)).toMatchObject({ credit: 1002 });
      expect(early.rows.find((r) => r.id === a)).toBeUndefined();
      await first.query(`UPDATE players SET credit = 1001 WHERE id = ${a}`);
      await first.query("COMMIT");
      const late = await list("/player/get-all-players", early.token);
      expect(late.rows.find((r) => r.id === a)).toMatchObject({ credit: 1001 });
    } finally {
      await first.end();
      await second.end();
    }
  });

  it("when syncs run in a loop during the writes, then the cache equals the table at the end", async () => {
    const cache = new Map<Row["id"], Row>();
    const full = await list("/player/get-all-players");
    for (const row of full.rows) cache.set(row.id, row);
    let token = full.token;
    let writing = true;
    let syncs = 0;
    const syncing = (async () => {
      while (writing) {
        const sync = await list("/player/get-all-players", token);
        for (const row of sync.rows) cache.set(row.id, row);
        token = sync.token;
        syncs++;
      }
    })();
    await writers(8, onPostgres ? 25 : 10);
    writing = false;
    await syncing;
    const last = await list("/player/get-all-players", token);
    for (const row of last.rows) cache.set(row.id, row);
    expect(syncs).toBeGreaterThan(3);
    const table = (await list("/player/get-all-players")).rows;
    expect([...cache.values()].sort((x, y) => Number(x.id) - Number(y.id))).toEqual(table);
  }, 120_000);
});
