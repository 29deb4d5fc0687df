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
  const k = KINDS[which];
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return fromPostgres(error, k);
  const cause = adapterCause(error);
  const matches = (k.prisma as readonly string[]).includes(error.code) || cause?.kind === k.kind || cause?.originalCode === k.sqlState;
  if (!matches) return undefined;
  const meta = error.meta as { target?: unknown; field_name?: unknown } | undefined;
  const legacy = meta?.target ?? meta?.field_name;
  return {
    constraint: cause?.constraint?.index ?? cause?.originalMessage?.match(k.message)?.[1] ?? (typeof legacy === "string" ? legacy : undefined),
    fields: cause?.constraint?.fields ?? (Array.isArray(legacy) ? legacy.map(String) : []),
  };
}

/** node-postgres's own error (a raw query run without Prisma, db/pg-reader.ts): PostgreSQL's code and constraint, as the pg adapter reports them. */
function fromPostgres(error: unknown, k: (typeof KINDS)[keyof typeof KINDS]): ConstraintViolation | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (!(error instanceof Error) || code !== k.sqlState) return undefined;
  return { constraint: typeof constraint === "string" ? constraint : error.message.match(k.message)?.[1], fields: [] };
}

export const uniqueViolation = (error: unknown) => constraintViolation(error, "unique");

/** A write that points at a record that does not exist (P2003): which constraint, which fields. */
export const foreignKeyViolation = (error: unknown) => constraintViolation(error, "foreignKey");

/** A write that found no record to change (update/delete of a missing id). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025";
}

/**
 * PostgreSQL's codes for "not now" rather than "wrong": connections lost or
 * refused, the server shutting down or starting, too many connections, a
 * statement cancelled by statement_timeout, and the server refusing the
 * configured database or credentials. None is the client's fault: 503.
 */
// prettier-ignore
const UNAVAILABLE_SQLSTATES = new Set([
  "57014",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "08000",
  "08001",
  "08003",
  "08006",
  // The server refuses this service's database or credentials (a misconfigured replica, a rotated password):
  // the operator's problem, not the client's, and /readyz must say "not ready".
  "3D000",
  "28000",
  "28P01",
]);
const UNAVAILABLE_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TlsConnectionError",
  "DatabaseDoesNotExist",
  "DatabaseAccessDenied",
  "AuthenticationFailed",
]);
const UNAVAILABLE_NODE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND"]);
/** node-postgres says these in words only, without a code. */
const UNAVAILABLE_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Query read timeout/i;

/** The database cannot be reached, or not in time: connection refused, lost, or timed out. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientInitializationError) return true;
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    // P2024: no connection from the pool in time; P2028: a transaction could not start or ran out of time.
    if (["P1001", "P1002", "P1008", "P1017", "P2024", "P2028"].includes(error.code)) return true;
    const cause = adapterCause(error);
    if (cause?.kind !== undefined && UNAVAILABLE_KINDS.has(cause.kind)) return true;
    if (cause?.originalCode !== undefined && UNAVAILABLE_SQLSTATES.has(cause.originalCode)) return true;
    return UNAVAILABLE_MESSAGES.test(error.message);
  }
  if (error instanceof Prisma.PrismaClientUnknownRequestError || error instanceof Prisma.PrismaClientRustPanicError) {
    return UNAVAILABLE_MESSAGES.test(error.message);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code))) return true;
  return error instanceof Error && UNAVAILABLE_MESSAGES.test(error.message);
}
