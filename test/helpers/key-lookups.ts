import type { PrismaClient } from "../../src/generated/prisma/client.js";

/** A Prisma client that counts every lookup of an API user (a key's database lookup), for tests of what is cached. */
export function countingKeyLookups(prisma: PrismaClient): { prisma: PrismaClient; lookups: () => number; reset: () => void } {
  let lookups = 0;
  const counted = prisma.$extends({
    query: {
      apiUser: {
        findUnique({ args, query }) {
          lookups += 1;
          return query(args);
        },
        // A key is looked up as the current or the previous key of a user (users.ts, authenticate).
        findFirst({ args, query }) {
          lookups += 1;
          return query(args);
        },
      },
    },
  }) as unknown as PrismaClient;
  return { prisma: counted, lookups: () => lookups, reset: () => (lookups = 0) };
}
