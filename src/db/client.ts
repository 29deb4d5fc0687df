import type { Prisma } from "../generated/prisma/client.js";

/** A Prisma client or the client of a transaction: statements made through it belong to that transaction. */
export type DbClient = Prisma.TransactionClient;

/**
 * What a read may use: raw queries only (every read is one SELECT, written
 * out). None of the model methods, so a read handler cannot create, update
 * or delete through it. On PostgreSQL it also opens list snapshots.
 */
export type ReadClient = Pick<Prisma.TransactionClient, "$queryRaw"> & {
  /**
   * A read-only snapshot on a connection of its own, for a whole list (pg-reader.ts); undefined when
   * every connection lists may hold is taken. Absent on PGlite, whose single connection a list must not hold.
   */
  readonly snapshot?: (timeoutMs: number) => Promise<ListSnapshot | undefined>;
};

/**
 * A read-only REPEATABLE READ transaction on a pooled connection: its
 * statements, and the cursor, see one snapshot. It holds the connection until
 * ended or abandoned.
 */
export interface ListSnapshot {
  /** Queries in the transaction. */
  readonly db: Pick<ReadClient, "$queryRaw">;
  /** The first column of a statement's rows as text, read `rows` at a time as asked ([] once none remain): one statement, one portal. */
  cursor(query: Prisma.Sql): { read(rows: number): Promise<string[]> };
  /** Ends the transaction and gives the connection back to the pool. */
  end(): Promise<void>;
  /** The list is over before its end (its client gone, a failure): the connection is closed at once, its transaction with it. No-op once ended. */
  abandon(): void;
}
