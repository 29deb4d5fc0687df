import http from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { playerSummary } from "../../src/entities/player.js";
import { LIST_BATCH_ROWS } from "../../src/lists/list.js";
import { apiRoutes } from "../../src/resources/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { onPostgres } from "../helpers/database.js";

// Long rows (~1.6 KB of JSON each): on PostgreSQL ~10 MB, more than the kernel's buffers on both ends of a connection
// take, so that a client that pauses holds the list mid-way; on PGlite (slower to fill) fewer, many batches still.
const PLAYERS = onPostgres ? 6_000 : 2_500;

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ routes: apiRoutes });
  key = await t.key("user-A");
  await t.database.db.prisma.$executeRawUnsafe(`
    INSERT INTO players (pseudo, token, ip, nickname, "gradeId", tag)
    SELECT 'snap' || g || repeat('p', 700), 't', '198.51.100.9', 'snap' || g || repeat('n', 700), g % 3, CASE WHEN g % 7 = 0 THEN 'é "quoted" 🎮' END
      FROM generate_series(1, ${PLAYERS}) AS g`);
}, 120_000);
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const table = async () => JSON.stringify((await prisma().player.findMany({ orderBy: { id: "asc" } })).map((p) => playerSummary.toJson(p)));

/** A whole list read by a client that pauses after its first chunk until `resume` is called; `body` has the rest. */
function slowList(): Promise<{ resume(): void; cut(): void; body: Promise<{ text: string; syncToken: string }> }> {
  const port = Number(new URL(t.url).port);
  return new Promise((started, failed) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/api/player/get-all-players", headers: { "X-API-Key": key } }, (res) => {
      const chunks: Buffer[] = [];
      const body = new Promise<{ text: string; syncToken: string }>((resolve, reject) => {
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ text: Buffer.concat(chunks).toString("utf8"), syncToken: String(res.headers["sync-token"]) }));
        res.on("error", reject);
      });
      body.catch(() => undefined);
      res.once("data", () => {
        res.pause();
        started({ resume: () => res.resume(), cut: () => req.destroy(), body });
      });
    });
    req.on("error", failed);
  });
}

/** The service's sessions holding a list's cursor open (PostgreSQL: "active" while its portal is suspended). */
async function listSessions(): Promise<number> {
  const [row] = await prisma().$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' AND query LIKE '%row_to_json(r)::text FROM "players"%'`,
  );
  return row!.n;
}

describe("whole lists on one snapshot", () => {
  it("when a list is many batches long, then it arrives whole and in order", async () => {
    const res = await fetch(`${t.url}/api/player/get-all-players`, { headers: { "X-API-Key": key } });
    const text = await res.text();
    expect(res.status).toBe(200);
    const ids = (JSON.parse(text) as { id: number }[]).map((p) => p.id);
    expect(ids.length).toBeGreaterThan(5 * LIST_BATCH_ROWS);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(text).toBe(await table());
  });

  it("when players are written while a list is being read, then the list is still whole and valid, and its token's sync sends the changes", async () => {
    const before = await table();
    const list = await slowList();
    const first = await prisma().player.findFirstOrThrow({ orderBy: { id: "asc" } });
    const end = await prisma().player.findFirstOrThrow({ orderBy: { id: "desc" } });
    await prisma().player.update({ where: { id: end.id }, data: { credit: 4242 } });
    await prisma().player.update({ where: { id: first.id }, data: { credit: 4343 } });
    await prisma().player.create({ data: { pseudo: "joinedMidList", token: "t", ip: "198.51.100.9" } });
    list.resume();
    const { text, syncToken } = await list.body;
    const rows = JSON.parse(text) as { id: number; credit: number; pseudo: string }[];
    const ids = rows.map((p) => p.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining((JSON.parse(before) as { id: number }[]).map((p) => p.id)));
    // On PostgreSQL the whole list is the table as its first batch saw it; elsewhere each batch as it was read.
    if (onPostgres) expect(text).toBe(before);
    const sync = await fetch(`${t.url}/api/player/get-all-players?since=${encodeURIComponent(syncToken)}`, { headers: { "X-API-Key": key } });
    const changed = (await sync.json()) as { id: number; credit: number; pseudo: string }[];
    expect(changed.find((p) => p.id === end.id)?.credit).toBe(4242);
    expect(changed.find((p) => p.id === first.id)?.credit).toBe(4343);
    expect(changed.some((p) => p.pseudo === "joinedMidList")).toBe(true);
  });

  it.skipIf(!onPostgres)("when a client leaves mid-list, then its database connection and transaction are let go at once, and lists go on", async () => {
    const list = await slowList();
    // The list holds its cursor open while its client does not read.
    await vi.waitFor(async () => expect(await listSessions()).toBe(1), { timeout: 10_000 });
    list.cut();
    await vi.waitFor(async () => expect(await listSessions()).toBe(0), { timeout: 10_000 });
    const again = await fetch(`${t.url}/api/player/get-all-players`, { headers: { "X-API-Key": key } });
    expect(((await again.json()) as unknown[]).length).toBe(await prisma().player.count());
  });
});
