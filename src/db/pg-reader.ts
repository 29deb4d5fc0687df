import pg from "pg";
import { Prisma } from "../generated/prisma/client.js";
import type { ReadClient } from "./client.js";

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
export function pgRawQueries(pool: pg.Pool): ReadClient {
  const $queryRaw = (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
    const sql = query instanceof Prisma.Sql ? query : new Prisma.Sql(query, values);
    return pool.query({ text: sql.text, values: sql.values, types }).then((result) => result.rows as unknown[]);
  };
  return { $queryRaw } as unknown as ReadClient;
}
