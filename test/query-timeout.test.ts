import pg from "pg";
import Cursor from "pg-cursor";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timedClient } from "../src/db/query-timeout.js";
import { createServerDatabase, endPool, onPostgres } from "./helpers/database.js";
import { TcpProxy } from "./helpers/tcp-proxy.js";

const TIMEOUT_MS = 400;

/**
 * The pool's backstop for a server that never answers (db/query-timeout.ts):
 * pg's query_timeout, kept without a timer and a closure per query.
 */
describe.skipIf(!onPostgres)("a query the server never answers (PostgreSQL)", () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createServerDatabase();
    const target = new URL(database.url);
    proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).listen();
    const proxied = new URL(database.url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    pool = new pg.Pool({ connectionString: proxied.toString(), max: 2, Client: timedClient(TIMEOUT_MS) });
  });
  afterAll(async () => {
    if (pool) await endPool(pool);
    await proxy?.close();
    await database?.drop();
  });

  it("fails with 'Query read timeout' after the timeout, in every form pg offers, and the pool drops the connection", async () => {
    // Connections made while the proxy forwards, then the proxy forwards nothing more.
    const [first, second] = [await pool.connect(), await pool.connect()];
    expect((await first.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    expect((await second.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    proxy.stall();
    const started = Date.now();
    const viaPromise = first.query("SELECT 2").then(
      () => "answered",
      (error: Error) => error.message,
    );
    const viaCallback = new Promise<string>((resolve) => second.query("SELECT 3", [], (error) => resolve(error?.message ?? "answered")));
    expect(await viaPromise).toBe("Query read timeout");
    expect(await viaCallback).toBe("Query read timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    for (const client of [first, second]) client.release(new Error("Query read timeout"));
    expect(pool.totalCount).toBe(0);
    proxy.restore();
  });

  it("fails pool.query too (the read routes' way), and the pool serves again once the server answers", async () => {
    proxy.restore();
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    proxy.stall();
    await expect(pool.query({ name: "stalled", text: "SELECT $1::int AS n", values: [4] })).rejects.toThrow("Query read timeout");
    proxy.restore();
    expect((await pool.query({ name: "again", text: "SELECT $1::int AS n", values: [5] })).rows).toEqual([{ n: 5 }]);
    expect(pool.totalCount).toBeLessThanOrEqual(1);
  });

  it("leaves answered queries alone: each callback once, in order, prepared statements and cursors as before", async () => {
    const client = await pool.connect();
    try {
      const answers: number[] = [];
      for (let i = 0; i < 20; i++) answers.push((await client.query<{ n: number }>({ name: "echo", text: "SELECT $1::int AS n", values: [i] })).rows[0]!.n);
      expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i));
      // Longer than the timeout in all, each query well within it.
      const slow = await client.query("SELECT pg_sleep($1::float8 / 1000) AS slept, 7 AS n", [TIMEOUT_MS / 2]);
      expect(slow.rows[0].n).toBe(7);
      const cursor = client.query(new Cursor<{ n: number }>("SELECT generate_series(1, 5) AS n"));
      expect((await cursor.read(10)).map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
      await cursor.close();
      let calls = 0;
      await new Promise<void>((resolve) => client.query("SELECT 1", () => (calls++, resolve())));
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
      expect(calls).toBe(1);
    } finally {
      client.release();
    }
  });
});
