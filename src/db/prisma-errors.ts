import { Prisma } from "../generated/prisma/client.js";

/**
 * What a failed write tells about a unique violation.
 *
 * With driver adapters, Prisma 7 does not fill `meta.target`: the detail sits
 * under `meta.driverAdapterError.cause`, and the adapters differ — the pg
 * adapter names the index (`constraint.index`), the PGlite adapter names the
 * fields (`constraint.fields`); both keep PostgreSQL's message, which names
 * the constraint. P2002 comes from model queries, P2010 from raw ones.
 */
export interface UniqueViolation {
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

export function uniqueViolation(error: unknown): UniqueViolation | undefined {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return undefined;
  const cause = adapterCause(error);
  const isUnique =
    error.code === "P2002" || cause?.kind === "UniqueConstraintViolation" || cause?.originalCode === "23505";
  if (!isUnique) return undefined;
  const fromMessage = cause?.originalMessage?.match(/unique constraint "([^"]+)"/)?.[1];
  const target = (error.meta as { target?: unknown } | undefined)?.target;
  return {
    constraint: cause?.constraint?.index ?? fromMessage ?? (typeof target === "string" ? target : undefined),
    fields: cause?.constraint?.fields ?? (Array.isArray(target) ? target.map(String) : []),
  };
}

/** A write that points at a record that does not exist (P2003): which constraint, which fields. */
export function foreignKeyViolation(error: unknown): UniqueViolation | undefined {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return undefined;
  const cause = adapterCause(error);
  const isForeignKey =
    error.code === "P2003" || cause?.kind === "ForeignKeyConstraintViolation" || cause?.originalCode === "23503";
  if (!isForeignKey) return undefined;
  const fromMessage = cause?.originalMessage?.match(/foreign key constraint "([^"]+)"/)?.[1];
  const fieldName = (error.meta as { field_name?: unknown } | undefined)?.field_name;
  return {
    constraint: cause?.constraint?.index ?? fromMessage ?? (typeof fieldName === "string" ? fieldName : undefined),
    fields: cause?.constraint?.fields ?? [],
  };
}

/** A write that found no record to change (update/delete of a missing id). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025";
}

/** The database cannot be reached: connection refused, lost, or timed out. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientInitializationError) return true;
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (["P1001", "P1002", "P1017", "P2024"].includes(error.code)) return true;
    const kind = adapterCause(error)?.kind;
    return kind === "DatabaseNotReachable" || kind === "ConnectionClosed" || kind === "SocketTimeout";
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P01", "57P03"].includes(code);
}
