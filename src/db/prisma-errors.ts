import { Prisma } from "../generated/prisma/client.js";

/**
 * What a failed write tells about the constraint it broke.
 *
 * With driver adapters, Prisma 7 does not fill `meta.target`: the detail sits
 * under `meta.driverAdapterError.cause`, and the adapters differ — the pg
 * adapter names the index (`constraint.index`), the PGlite adapter names the
 * fields (`constraint.fields`); both keep PostgreSQL's message, which names
 * the constraint. P2002 comes from model queries, P2010 from raw ones.
 */
export interface ConstraintViolation {
  constraint: string | undefined;
  fields: string[];
}

interface AdapterCause {
  kind?: string;
  originalCode?: string;
  originalMessage?: string;
  constraint?: { index?: string; fields?: string[] };
}

function adapterCause(error: Prisma.PrismaClientKnownRequestError): AdapterCause | undefined {
  const meta = error.meta as { driverAdapterError?: { cause?: AdapterCause } } | undefined;
  return meta?.driverAdapterError?.cause;
}

/** How each kind of constraint failure shows itself: Prisma's code, the adapter's kind, PostgreSQL's code and message. */
const KINDS = {
  unique: { prisma: ["P2002"], kind: "UniqueConstraintViolation", sqlState: "23505", message: /unique constraint "([^"]+)"/ },
  foreignKey: { prisma: ["P2003"], kind: "ForeignKeyConstraintViolation", sqlState: "23503", message: /foreign key constraint "([^"]+)"/ },
} as const;

function constraintViolation(error: unknown, which: keyof typeof KINDS): ConstraintViolation | undefined {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return undefined;
  const k = KINDS[which];
  const cause = adapterCause(error);
  const matches =
    (k.prisma as readonly string[]).includes(error.code) || cause?.kind === k.kind || cause?.originalCode === k.sqlState;
  if (!matches) return undefined;
  const meta = error.meta as { target?: unknown; field_name?: unknown } | undefined;
  const legacy = meta?.target ?? meta?.field_name;
  return {
    constraint:
      cause?.constraint?.index ?? cause?.originalMessage?.match(k.message)?.[1] ?? (typeof legacy === "string" ? legacy : undefined),
    fields: cause?.constraint?.fields ?? (Array.isArray(legacy) ? legacy.map(String) : []),
  };
}

export const uniqueViolation = (error: unknown) => constraintViolation(error, "unique");

/** A write that points at a record that does not exist (P2003): which constraint, which fields. */
export const foreignKeyViolation = (error: unknown) => constraintViolation(error, "foreignKey");

/** A write that found no record to change (update/delete of a missing id). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025";
}

/**
 * The database cannot be reached: connection refused, lost, or timed out; or a
 * write's transaction could not start or finish in time (P2028).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientInitializationError) return true;
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (["P1001", "P1002", "P1017", "P2024", "P2028"].includes(error.code)) return true;
    const kind = adapterCause(error)?.kind;
    return kind === "DatabaseNotReachable" || kind === "ConnectionClosed" || kind === "SocketTimeout";
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P01", "57P03"].includes(code);
}

