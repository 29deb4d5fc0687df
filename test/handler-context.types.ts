/**
 * Compile-time checks of what a handler's context lets it do, run by
 * `npm run typecheck` (tsc reports an `@ts-expect-error` that has no error
 * below it): each line marked so must stay a type error.
 */
import { z } from "zod";
import { Prisma } from "../src/generated/prisma/client.js";
import { defineRoute, Versioned, versioned } from "../src/http/route.js";

const entry = { action: "world.update", target: Prisma.sql`'world:' || w.id`, changes: Prisma.sql`'{}'::jsonb` } as const;

export const misuses = [
  defineRoute({
    method: "GET",
    path: "/probe/read-writes",
    summary: "a read that tries to write",
    description: "type probe",
    callers: ["A"],
    response: z.unknown(),
    async handler(_input, ctx) {
      // @ts-expect-error A read cannot write with its audit entry.
      await ctx.auditedWrite(Prisma.sql`UPDATE worlds SET tag = NULL RETURNING *`, entry);
      // @ts-expect-error A read cannot record an audit entry.
      await ctx.audit({ action: "world.update", target: "world:1" });
      // @ts-expect-error A read has no way to the primary: only its reader client.
      await ctx.deps.db.prisma.world.deleteMany();
      // @ts-expect-error Its reader client has no model methods (which could write), only raw queries.
      await ctx.db.world.deleteMany();
      return ctx.db.$queryRaw`SELECT id FROM worlds`;
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/probe/statement-audits",
    summary: "a one-statement write that records a second statement's audit entry",
    description: "type probe",
    callers: ["A"],
    response: z.unknown(),
    async oneStatement(_input, ctx) {
      // @ts-expect-error Without a transaction there is no separate audit entry: auditedWrite writes both at once.
      await ctx.audit({ action: "world.update", target: "world:1" });
      return ctx.auditedWrite(Prisma.sql`UPDATE worlds SET tag = NULL RETURNING *`, entry);
    },
  }),
  defineRoute({
    method: "GET",
    path: "/probe/unversioned-answer",
    summary: "a route declared versioned whose handler answers without a version",
    description: "type probe",
    callers: ["A"],
    response: versioned(z.object({ id: z.number() })),
    // @ts-expect-error A versioned response must be answered with its version.
    handler: () => Promise.resolve({ id: 1 }),
  }),
  defineRoute({
    method: "GET",
    path: "/probe/versioned-answer",
    summary: "the same, answered with its version",
    description: "type probe",
    callers: ["A"],
    response: versioned(z.object({ id: z.number() })),
    handler: () => Promise.resolve(new Versioned("probe-1", { id: 1 })),
  }),
  defineRoute({
    method: "POST",
    path: "/probe/transaction",
    summary: "a write in a transaction may do both",
    description: "type probe",
    callers: ["A"],
    response: z.unknown(),
    async handler(_input, ctx) {
      await ctx.audit({ action: "world.update", target: "world:1" });
      return ctx.auditedWrite(Prisma.sql`UPDATE worlds SET tag = NULL RETURNING *`, entry);
    },
  }),
];
