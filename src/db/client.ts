import type { Prisma } from "../generated/prisma/client.js";

/** A Prisma client or the client of a transaction: statements made through it belong to that transaction. */
export type DbClient = Prisma.TransactionClient;

/**
 * What a read may use: raw queries only (every read is one SELECT, written
 * out). None of the model methods, so a read handler cannot create, update
 * or delete through it.
 */
export type ReadClient = Pick<Prisma.TransactionClient, "$queryRaw">;
