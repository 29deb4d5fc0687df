import type { Prisma } from "../generated/prisma/client.js";

/** A Prisma client or the client of a transaction: statements made through it belong to that transaction. */
export type DbClient = Prisma.TransactionClient;
