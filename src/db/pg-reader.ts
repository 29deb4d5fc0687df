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

/** Statement texts given a name at most: a route's statements, with their variants (the fields an update sets), fit. */
const PREPARED_MAX = 200;
/** Texts counted at most while waiting for their second use. */
const SEEN_MAX = 5_000;

/**
 * Names for the statements run more than once, so that each connection
 * parses and plans each of them once: node-postgres prepares a named
 * statement on a connection the first time it runs there, and PostgreSQL
 * keeps it for the connection's life. A text is named at its second use (a
 * one-off stays unnamed), up to PREPARED_MAX texts; the same text has the
 * same name on every connection. Unnamed, a point read cost PostgreSQL about
 * 1.6 times the CPU, a reward log's write 1.7 times (the history of bench/results.md).
 */
class StatementNames {
  /** A text's name; a count of uses before it has one; null: never to be named. */
  private readonly texts = new Map<string, string | number | null>();
  private named = 0;

  of(text: string): string | undefined {
    const entry = this.texts.get(text);
    if (typeof entry === "string") return entry;
    if (entry === undefined) {
      if (this.texts.size < SEEN_MAX) this.texts.set(text, 1);
      return undefined;
    }
    if (entry === null || this.named >= PREPARED_MAX) return undefined;
    const name = `api_${this.named++}`;
    this.texts.set(text, name);
    return name;
  }

  /** This text runs unnamed from now on. */
  drop(text: string): void {
    this.texts.set(text, null);
  }
}

const names = new StatementNames();

/**
 * PostgreSQL refuses to run a prepared statement whose result's columns
 * changed since it was prepared (`SELECT *` or `RETURNING *` over a table a
 * newer release's migration altered while this one runs): it failed before
 * doing anything, and runs again unnamed.
 */
const planOutdated = (error: unknown) =>
  error instanceof Error && (error as { code?: string }).code === "0A000" && error.message.includes("cached plan must not change result type");

/**
 * Raw queries on PostgreSQL without Prisma: `$queryRaw` on the pool itself, for the read routes and the
 * one-statement writes. Same SQL, parameters and values as Prisma's (test/pg-reader.test.ts), without
 * its request machinery, which cost a point read ~80–100 µs of CPU (bench/results.md). Statements are
 * prepared per connection unless `prepared` is false (DB_PREPARED_STATEMENTS); failures are mapped as
 * Prisma's are (db/prisma-errors.ts).
 */
/** Whether statements are prepared: fixed, or asked at each query (database.ts turns it off behind a transaction-mode pooler). */
export type Prepared = boolean | (() => boolean);

export function pgRawQueries(pool: pg.Pool | pg.PoolClient, prepared: Prepared = true): ReadClient {
  const preparing = typeof prepared === "function" ? prepared : () => prepared;
  const $queryRaw = async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values);
    const name = preparing() ? names.of(sql.text) : undefined;
    try {
      return (await pool.query({ name, text: sql.text, values: sql.values, types })).rows as unknown[];
    } catch (error) {
      if (name === undefined || !planOutdated(error)) throw error;
      names.drop(sql.text);
      return (await pool.query({ text: sql.text, values: sql.values, types })).rows as unknown[];
    }
  };
  return { $queryRaw } as unknown as ReadClient;
}

/**
 * The read routes' queries with list snapshots (ReadClient.snapshot): a whole list read in one read-only
 * REPEATABLE READ transaction on a connection of its own, through a cursor, a batch per Execute as its
 * client takes them. At most half the pool's connections at once (beyond, keyset batches), each for at
 * most `timeoutMs` (HEAVY_LIST_DEADLINE_MS, as statement_timeout).
 */
export function pgListQueries(pool: pg.Pool, prepared: Prepared = true): ReadClient {
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
    return openSnapshot(client, timeoutMs, prepared, () => (holding -= 1));
  };
  return { ...pgRawQueries(pool, prepared), snapshot };
}

function openSnapshot(client: pg.PoolClient, timeoutMs: number, prepared: Prepared, released: () => void): ListSnapshot {
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
    db: pgRawQueries(client, prepared),
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
