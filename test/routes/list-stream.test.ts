import { once } from "node:events";
import net from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { infectedStats } from "../../src/entities/infected.js";
import { playerSummary } from "../../src/entities/player.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { defineRoute } from "../../src/http/route.js";
import { LIST_BATCH_ROWS } from "../../src/lists/list.js";
import { apiRoutes } from "../../src/resources/index.js";
import { allPlayers } from "../../src/resources/player/queries.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

/** A list that fails in PostgreSQL past its first batch (division by zero at its 500th row): an error after the first byte. */
const brokenList = defineRoute({
  method: "GET",
  path: "/probe/broken-list",
  summary: "a list that fails half-way",
  description: "test probe",
  callers: ["A"],
  response: apiRoutes.find((r) => r.path === "/player/get-all-players")!.response,
  list: { source: allPlayers, where: () => Prisma.sql`1 / (t.id - (SELECT min(id) + 499 FROM players)) IS NOT NULL` },
});

const PLAYERS = 2 * LIST_BATCH_ROWS + 500;

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp({ routes: [...apiRoutes, brokenList] });
  key = await t.key("user-A");
  await t.database.db.prisma.$executeRawUnsafe(`
    INSERT INTO players (pseudo, token, ip, "gradeId", tag)
    SELECT 'streamed' || g, 't', '198.51.100.7', g % 3, CASE WHEN g % 7 = 0 THEN 'é "quoted" \\ 🎮' END FROM generate_series(1, ${PLAYERS}) AS g`);
  await t.database.db.prisma.$executeRawUnsafe(`INSERT INTO infected_stats ("playerId", kill) SELECT id, id % 13 FROM players WHERE id % 2 = 0`);
}, 120_000);
afterAll(() => t.close());

const prisma = () => t.database.db.prisma;
const get = (path: string) => request(t.url).get(`/api${path}`).set("X-API-Key", key);

describe("whole lists, streamed", () => {
  it("when a list is longer than one batch, then it is sent chunked, byte for byte the array it always was", async () => {
    const res = await get("/player/get-all-players");
    expect(res.status).toBe(200);
    expect(res.headers["transfer-encoding"]).toBe("chunked");
    expect(res.headers["content-length"]).toBeUndefined();
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.headers.etag).toMatch(/^"players-v\d+"$/);
    const rows = await prisma().player.findMany({ orderBy: { id: "asc" } });
    expect(rows.length).toBeGreaterThan(2 * LIST_BATCH_ROWS);
    expect(res.text).toBe(JSON.stringify(rows.map((p) => playerSummary.toJson(p))));

    const stats = await get("/infecte2/get-all-infectes");
    const statRows = await prisma().infectedStats.findMany({ orderBy: { playerId: "asc" } });
    expect(stats.text).toBe(JSON.stringify(statRows.map((s) => infectedStats.full.toJson(s))));
  });

  it("when a list fits in one batch, then it is sent whole with its Content-Length", async () => {
    const res = await get("/parkour/get-all-maps");
    expect(res.status).toBe(200);
    expect(res.headers["content-length"]).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers["sync-token"]).toMatch(/^s2\./);
  });

  it("when a client stops reading a list of tens of MB, then the service produces only a few batches of it, not the list", async () => {
    // Long rows: ~30 MB of JSON, ten times what the kernel's buffers on both ends of the connection take.
    await prisma().$executeRawUnsafe(`
      INSERT INTO players (pseudo, token, ip, nickname, "chatId", tag, color)
      SELECT 'long' || g || repeat('p', 300), 't', '198.51.100.1', 'long' || g || repeat('n', 300), repeat('c', 64), repeat('t', 64), repeat('k', 32)
        FROM generate_series(1, 36000) AS g`);
    const sockets: net.Socket[] = [];
    const watch = (socket: net.Socket) => sockets.push(socket);
    t.server.on("connection", watch);
    const client = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    client.on("error", () => undefined);
    await once(client, "connect");
    let received = 0;
    client.on("data", (chunk: Buffer) => {
      received += chunk.length;
      client.pause();
    });
    client.write(`GET /api/player/get-all-players HTTP/1.1\r\nHost: slow\r\nX-API-Key: ${key}\r\n\r\n`);
    await vi.waitFor(() => expect(received).toBeGreaterThan(0), { timeout: 20_000 });
    const server = sockets.at(-1)!;
    // Let the service go as far as it would: until its writes wait on the client.
    let produced = -1;
    for (let stable = 0; stable < 5; ) {
      await new Promise((r) => setTimeout(r, 200));
      stable = server.bytesWritten === produced ? stable + 1 : 0;
      produced = server.bytesWritten;
    }
    t.server.off("connection", watch);
    client.destroy();
    const full = (await get("/player/get-all-players")).text.length;
    expect(full).toBeGreaterThan(30_000_000);
    // What it wrote: what the kernel buffers hold, and a batch or two; never the list.
    expect(produced).toBeLessThan(full / 3);
  }, 120_000);

  it("when the database fails after the first byte, then the body is cut short (never a complete-looking array) and it is logged", async () => {
    const client = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    const chunks: Buffer[] = [];
    client.on("data", (c: Buffer) => chunks.push(c));
    client.on("error", () => undefined);
    client.write(`GET /api/probe/broken-list HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`);
    await once(client, "close");
    const raw = Buffer.concat(chunks).toString("utf8");
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).toMatch(/transfer-encoding: chunked/i);
    expect(raw.endsWith("\r\n0\r\n\r\n")).toBe(false);
    expect(raw).not.toMatch(/\]\r\n/);
    expect(t.logs.lines.filter((l) => String(l.msg).startsWith("list failed after its first byte"))).toHaveLength(1);
  });
});
