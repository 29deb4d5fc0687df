import { z } from "zod";
import type { AuditEntry, AuditedWrite, AuditSource } from "../audit/audit.js";
import type { Caller } from "../auth/caller.js";
import type { CallerDirectory } from "../auth/callers.js";
import type { CallerGroup, Config } from "../core/config.js";
import type { ApiError } from "../core/errors.js";
import type { DbClient, ReadClient } from "../db/client.js";
import type { ListSource } from "../db/list-query.js";
import type { Prisma } from "../generated/prisma/client.js";
import { StreamedList } from "../lists/list.js";
import { cursorNeedsLimit, LIST_QUERY, type ListQuery } from "../lists/list-params.js";
import type { StreamStart } from "../stream/event-id.js";
import type { ApiUsers } from "../users/users.js";

/**
 * A route is a declaration: method, path, who may call it, what it takes, and
 * its handler. `registerRoutes` (register-routes.ts) turns it into Express
 * middleware; nothing else wires authentication, allow-lists or validation,
 * so none can be forgotten. What a handler may touch follows from its kind:
 * a GET reads, a write runs in a transaction (`handler`) or as one audited
 * statement (`oneStatement`).
 */

/** What a handler receives: the parsed query, body and declared headers. */
export interface RouteInput<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, H extends z.ZodType = z.ZodType> {
  query: z.output<Q>;
  body: z.output<B>;
  headers: z.output<H>;
}

/** A read's context: the reader client and nothing that writes. */
export interface ReadContext {
  caller: Caller;
  /** The configured caller groups, to say which ones a user is in. */
  callers: CallerDirectory;
  /** The read replica when DATABASE_READ_URL is set (GETs may then lag behind writes by the replication delay). */
  db: ReadClient;
  now: () => Date;
}

/** A write made as one SQL statement with its audit entry: atomic without a transaction. */
export interface StatementContext {
  caller: Caller;
  /** The configured caller groups, to say which ones a user is in. */
  callers: CallerDirectory;
  /** The primary, or the transaction an Idempotency-Key needs: for the statement and for reads deciding the answer. */
  db: DbClient;
  now: () => Date;
  /** Who calls, from which request: what audit entries name. */
  source: AuditSource;
  /**
   * Runs `INSERT`/`UPDATE … RETURNING *`, or an entity's update (which records the values it replaces), and
   * the audit entry of each row written, as one statement.
   */
  auditedWrite: AuditedWrite;
}

/** A write in a transaction of its own: its statements and its audit entry commit or roll back whole. */
export interface TransactionContext extends StatementContext {
  /** Records an audit entry in the write's transaction. */
  audit: (entry: AuditEntry) => Promise<void>;
  users: ApiUsers;
  /** What managing webhook endpoints needs: whether private targets are allowed, the key sealing their secrets. */
  webhooks: Pick<Config, "webhooksAllowPrivate" | "webhooksSecretKey">;
  /** Where an erasure's receipt is appended before it commits (ERASURE_LEDGER); undefined: none. */
  erasureLedger: string | undefined;
}

type Method = "GET" | "POST" | "PATCH";
type Handler<I, C, R> = (input: I, ctx: C) => Promise<R>;

/**
 * A point read's answer with its version (the ETag, which answers If-None-Match
 * with 304), for a route declared with `response: versioned(schema)`.
 */
export class Versioned {
  constructor(
    readonly etag: string,
    readonly body: unknown,
  ) {}
}

/** The response schema of a route whose handler answers Versioned. */
export class VersionedResponse<S extends z.ZodType = z.ZodType> {
  constructor(readonly schema: S) {}
}

export const versioned = <S extends z.ZodType>(schema: S) => new VersionedResponse(schema);

/** A response body already serialised (by PostgreSQL, for large lists): sent as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * One page of a list: `next` is the query string of the next page (sent as
 * a Link header, lists/next-link.ts), undefined on the last page. For a route
 * declared `paged: true`.
 */
export class Page {
  constructor(
    readonly body: unknown,
    readonly next: string | undefined,
  ) {}
}

/**
 * A list route: what it reads, and the rest follows (lists/list.ts): the whole
 * list streamed in keyset batches, pages (limit, cursor, Link), the sync by
 * change (Sync-Token, since). Its query takes limit, cursor and since besides
 * its own parameters.
 */
export interface ListDeclaration<I = RouteInput> {
  source: ListSource;
  /** The rows of the list, over the table aliased `t`; every row when absent. */
  where?: (input: I, ctx: ReadContext) => Prisma.Sql;
  /** The rows that join the list with time alone, no write (an item whose start passed): a sync adds those that joined since. */
  joinedSince?: (since: Date, now: Date) => Prisma.Sql;
}

/**
 * What an event stream's handler answers (GET /api/events): the types and
 * the resume point it validated and authorized; the stream itself is served
 * by the instance's EventHub (stream/hub.ts).
 */
export class EventStreamAnswer {
  constructor(
    readonly topics: ReadonlySet<string>,
    readonly resumeAfter: StreamStart | undefined,
  ) {}
}

type Answer<R> = R extends VersionedResponse ? Versioned : unknown;

interface Declared<Q extends z.ZodType, B extends z.ZodType, H extends z.ZodType, R> {
  /** Relative to /api, as the spec writes it. */
  path: string;
  summary: string;
  /** What a client author must know beyond the schemas; goes into the API documentation. */
  description: string;
  /** The spec's version label, where it gives one. */
  version?: string;
  /** Caller groups allowed; a route that names none refuses to start. */
  callers: readonly CallerGroup[];
  query?: Q;
  body?: B;
  /** Request headers the handler reads (If-Match), keyed by name as documented; validated like the query, after the key checks. */
  headers?: H;
  /** The JSON of a success; `versioned(schema)` when it comes with its version. */
  response: R;
  successStatus?: 200 | 201;
  /** Failures particular to this route, with when they happen; the ones every route shares are added by the documentation. */
  errors?: Partial<Record<403 | 404 | 409 | 410 | 412, string>>;
  /** Answers a Page: a Link header names the next one. */
  paged?: boolean;
  /** A full list: built and sent under the heavy-list bulkhead (HEAVY_LISTS_AT_ONCE). */
  heavy?: boolean;
  /** Answers an EventStreamAnswer: server-sent events (text/event-stream) until the client leaves. */
  eventStream?: boolean;
}

type ReadDeclaration<Q extends z.ZodType, B extends z.ZodType, H extends z.ZodType, R> = Declared<Q, B, H, R> & {
  method: "GET";
  /**
   * A cheap version of what the answer would be (never a hash of the body):
   * sent as ETag, and If-None-Match is answered 304 without running the handler.
   */
  etag?: Handler<RouteInput<Q, B, H>, ReadContext, string>;
} & ({ handler: Handler<RouteInput<Q, B, H>, ReadContext, Answer<R>>; list?: never } | { list: ListDeclaration<RouteInput<Q, B, H>>; handler?: never });

/**
 * How a write's foreign key naming nothing (an unknown player) is answered: as `kind`, the message naming
 * the column and the value sent (the entity's `unknownReference`). Rendered by register-routes.ts, as a
 * unique violation is on every write (409 DUPLICATE naming the value).
 */
export interface UnknownReference {
  of: { unknownReference(values: Record<string, unknown>, constraint?: string): string };
  kind: "VALIDATION" | "REFERENCE_NOT_FOUND";
}

type WriteDeclaration<Q extends z.ZodType, B extends z.ZodType, H extends z.ZodType, R> = Declared<Q, B, H, R> & {
  method: "POST" | "PATCH";
  unknownReference?: UnknownReference;
  /** For a POST whose answer holds a secret that must not be stored (a new API key): what an Idempotency-Key replay answers instead. */
  replayInstead?: (result: unknown) => ApiError;
  /**
   * A slow check of the input (a DNS lookup) made before the write's transaction opens, so that it
   * holds no database connection; what it throws is the answer.
   */
  checkFirst?: (input: RouteInput<Q, B, H>, config: Config) => Promise<void>;
} & (
    | { handler: Handler<RouteInput<Q, B, H>, TransactionContext, Answer<R>>; oneStatement?: never }
    | { oneStatement: Handler<RouteInput<Q, B, H>, StatementContext, Answer<R>>; handler?: never }
  );

/** A route as registered and documented: its declaration, with what follows from it. */
export interface RouteSpec extends Declared<z.ZodType, z.ZodType, z.ZodType, z.ZodType> {
  method: Method;
  /** Answers Versioned: its version is sent as ETag (and a GET answers If-None-Match with 304). */
  versioned: boolean;
  /** A write that needs, and gets, no transaction without an Idempotency-Key. */
  oneStatement: boolean;
  etag?: Handler<RouteInput, ReadContext, string>;
  read?: Handler<RouteInput, ReadContext, unknown>;
  write?: Handler<RouteInput, TransactionContext, unknown>;
  replayInstead?: (result: unknown) => ApiError;
  checkFirst?: (input: RouteInput, config: Config) => Promise<void>;
  unknownReference?: UnknownReference;
  list?: ListDeclaration;
}

export function defineRoute<
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  H extends z.ZodType = z.ZodType,
  R extends z.ZodType | VersionedResponse = z.ZodType,
>(declaration: ReadDeclaration<Q, B, H, R> | WriteDeclaration<Q, B, H, R>): RouteSpec {
  const { response } = declaration;
  const spec = {
    ...declaration,
    response: response instanceof VersionedResponse ? response.schema : response,
    versioned: response instanceof VersionedResponse,
    oneStatement: declaration.method !== "GET" && declaration.oneStatement !== undefined,
  } as RouteSpec & { handler?: unknown };
  if (declaration.method === "GET" && declaration.list) {
    const list = declaration.list as ListDeclaration;
    spec.query = ((declaration.query as z.ZodObject | undefined) ?? z.strictObject({})).extend(LIST_QUERY).superRefine(cursorNeedsLimit);
    spec.read = (input, ctx) => Promise.resolve(new StreamedList(list, input.query as ListQuery, ctx, list.where && (() => list.where!(input, ctx))));
  } else if (declaration.method === "GET") spec.read = declaration.handler;
  // A one-statement handler gets a StatementContext, which a TransactionContext extends.
  else spec.write = declaration.handler ?? declaration.oneStatement;
  delete spec.handler;
  return spec;
}
