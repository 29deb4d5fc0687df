import pg from "pg";
import Cursor from "pg-cursor";
import { Prisma } from "../generated/prisma/client.js";
import type { ListSnapshot, ReadClient } from "./client.js";

/**
 * How Prisma's raw queries hand back the column types node-postgres reads
 * otherwise: int8 as bigint (pg: text), numeric as a Decimal (pg: text), and
 * timestamp / date without a time zone as UTC (pg: local time). Every other
 * type (int4, bool, text, citext, timestamptz, json…) pg already reads alike.
 */
const AS_PRISMA: Record<number, (text: string) => unknown> = {
  20: (text) => BigInt(text),
  1700: (text) => new Prisma.Decimal(text),
  1114: (text) => new Date(`${text.replace(" ", "T")}Z`),
  1082: (text) => new Date(`${text}T00:00:00Z`),
};
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary"): ((text: string) => unknown) =>
    AS_PRISMA[oid] ?? (pg.types.getTypeParser(oid, format) as (text: string) => unknown),
};

/**
 * Raw queries on PostgreSQL without Prisma: `$queryRaw` run on the pool
 * itself, for the read routes (db.readQueries) and the writes made as one
 * statement outside a transaction (db.writeQueries). Same SQL, same
 * parameters, same values back as Prisma's `$queryRaw` (test/pg-reader.test.ts),
 * without Prisma's request machinery around each query, which cost a point
 * read ~80–100 µs of CPU, more than the whole query on node-postgres
 * (bench/results.md). Failures are node-postgres's own, which
 * db/prisma-errors.ts maps like Prisma's (503 when the database is
 * unavailable, the constraint of a unique or foreign-key violation).
 */
export function pgRawQueries(pool: pg.Pool | pg.PoolClient): ReadClient {
  const $queryRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values);
    return pool.query({ text: sql.text, values: sql.values, types }).then((result) => result.rows as unknown[]);
  };
  return { $queryRaw } as unknown as ReadClient;
}

/**
 * The read routes' queries with list snapshots (ReadClient.snapshot): a whole
 * list is read in one read-only REPEATABLE READ transaction on a connection of
 * its own, its first batch (with the sync facts) and then the rest as one
 * statement through a cursor, a batch per Execute as its client takes them.
 *
 * What holds a connection is bounded: at most half the pool's connections at
 * once (the rest stay for every other request; a list beyond that is read in
 * keyset batches, one statement each), each list under its heavy-list slot
 * and for at most `timeoutMs` (the transaction's statement_timeout, the
 * HEAVY_LIST_DEADLINE_MS at which the service cuts the list's client anyway).
 */
export function pgListQueries(pool: pg.Pool): ReadClient {
  const most = Math.max(1, Math.floor((pool.options.max ?? 10) / 2));
  let holding = 0;
  const snapshot = async (timeoutMs: number): Promise<ListSnapshot | undefined> => {
    if (holding >= most) return undefined;
    holding += 1;
    let client: pg.PoolClient | undefined;
    try {
      client = await pool.connect();
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = ${Math.floor(timeoutMs)}`);
    } catch (error) {
      holding -= 1;
      client?.release(error as Error);
      throw error;
    }
    return openSnapshot(client, timeoutMs, () => (holding -= 1));
  };
  return { ...pgRawQueries(pool), snapshot };
}

function openSnapshot(client: pg.PoolClient, timeoutMs: number, released: () => void): ListSnapshot {
  let state: "open" | "ending" | "done" = "open";
  const cursors: Cursor[] = [];
  const finish = (error?: Error) => {
    state = "done";
    // pg arms its query_timeout on a cursor as on any query, and disarms it only through the query's callback, which pg-cursor never calls.
    for (const cursor of cursors) (cursor as Cursor & { callback?: () => void }).callback?.();
    client.release(error);
    released();
  };
  return {
    db: pgRawQueries(client),
    cursor(query) {
      const cursor = new Cursor(query.text, query.values, { rowMode: "array" });
      // The client's own backstop (pg's query_timeout) a little after the server's statement_timeout, not the pool's, made for one statement.
      Object.assign(cursor, { query_timeout: timeoutMs + 5_000 });
      cursors.push(client.query(cursor));
      return { read: async (rows) => ((await cursor.read(rows)) as unknown as [string][]).map((row) => row[0]) };
    },
    async end() {
      if (state !== "open") return;
      state = "ending";
      try {
        await client.query("COMMIT");
      } catch (error) {
        finish(error as Error);
        return;
      }
      finish();
    },
    abandon() {
      if (state === "open") finish(new Error("list abandoned: connection closed"));
    },
  };
}
