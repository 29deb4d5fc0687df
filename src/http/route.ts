import { isIP } from "node:net";
import { type NextFunction, type Request, type RequestHandler, type Response, type Router } from "express";
import type { z } from "zod";
import type { CallerGroup } from "../config.js";
import { conflictMessage } from "../db/constraints.js";
import { uniqueViolation } from "../db/prisma-errors.js";
import { errors } from "../errors.js";
import type { Caller } from "../users/users.js";
import { PARSE_OPTIONS, validationError } from "./validation.js";
import type { AppDeps } from "../app.js";
import type { AuditedRowEntry, AuditEntry, AuditSource, DbClient } from "../audit/audit.js";
import type { Prisma } from "../generated/prisma/client.js";
import type { ApiError } from "../errors.js";
import { runWrite } from "./write.js";
import { jsonBody } from "./body.js";
import { keyFingerprint } from "../auth/api-keys.js";
import { BulkheadTimeout } from "./bulkhead.js";

type Method = "GET" | "POST" | "PATCH";

export interface HandlerContext {
  deps: AppDeps;
  caller: Caller;
  /**
   * The client for every statement of the handler: a write's own transaction
   * (so it commits or rolls back whole, with its audit entry), or the shared
   * client for a read.
   */
  db: DbClient;
  /** Who calls, from which request: what audit entries name. */
  source: AuditSource;
  /** Records an audit entry in the write's transaction. Every write handler records one; reads cannot. */
  audit: (entry: AuditEntry) => Promise<void>;
  /**
   * Runs a write (`INSERT`/`UPDATE … RETURNING *`) and its audit entry as one
   * statement: what routes declared `oneStatement` write with.
   */
  auditedWrite: <T>(write: Prisma.Sql, entry: AuditedRowEntry) => Promise<T[]>;
}

/**
 * A route is a declaration: method, path, who may call it, what it takes, and
 * its handler. `registerRoutes` turns it into Express middleware; nothing else
 * wires authentication, allow-lists or validation, so none can be forgotten.
 */
/** What a handler receives: the parsed query, body and declared headers. */
export interface RouteInput<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, H extends z.ZodType = z.ZodType> {
  query: z.output<Q>;
  body: z.output<B>;
  headers: z.output<H>;
}

export interface RouteSpec<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, H extends z.ZodType = z.ZodType> {
  method: Method;
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
  /**
   * Request headers the handler reads (If-Match), an object keyed by header
   * name as documented; validated like the query, after the key checks.
   */
  headers?: H;
  /** The JSON the route answers with on success. */
  response: z.ZodType;
  successStatus?: 200 | 201;
  /**
   * Failures particular to this route, with when they happen. The ones every
   * route shares (400, 401, 403, 429, 500, 503; 413 and 415 with a body) are added
   * by the documentation.
   */
  errors?: Partial<Record<404 | 409 | 412, string>>;
  /**
   * A cheap version of what the answer would be (never a hash of the body):
   * the route then sends it as ETag and answers If-None-Match with 304,
   * without running the handler.
   */
  etag?: (input: RouteInput<Q, B, H>, ctx: HandlerContext) => Promise<string>;
  /** The handler answers with a Versioned body: its version is sent as ETag (and a GET answers If-None-Match with 304). */
  versioned?: boolean;
  /** A full list: built and sent under the heavy-list bulkhead (HEAVY_LISTS_AT_ONCE). */
  heavy?: boolean;
  handler: (input: RouteInput<Q, B, H>, ctx: HandlerContext) => Promise<unknown>;
  /**
   * For a POST whose answer holds a secret that must not be stored (a new API
   * key): what an Idempotency-Key replay answers instead of the first answer.
   */
  replayInstead?: (result: unknown) => ApiError;
  /**
   * The handler writes with one statement (`ctx.auditedWrite`, the write and
   * its audit entry together): without an Idempotency-Key it needs, and gets,
   * no transaction.
   */
  oneStatement?: boolean;
}

export function defineRoute<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, H extends z.ZodType = z.ZodType>(
  spec: RouteSpec<Q, B, H>,
): RouteSpec {
  return spec;
}

/** A response body already serialised (by PostgreSQL, for large lists): sent as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * A body with its version, for point reads: the version comes in the same
 * query as the record, so it costs nothing; If-None-Match is checked after.
 * (Lists declare `etag` instead, so a 304 spares building them.) A write
 * answers with the record's new version as ETag, never with a 304.
 */
export class Versioned {
  constructor(
    readonly etag: string,
    readonly body: unknown,
  ) {}
}

declare module "express-serve-static-core" {
  interface Request {
    caller?: Caller;
  }
}

/** The rate limits around the key check: the one on failed authentication, and middleware run once the caller is known. */
export interface AuthenticationGuards {
  failures?: FailedAuthentications;
  after: RequestHandler[];
}

/** A limit on failed authentication by client address (http/rate-limit.ts), consulted by the key check. */
export interface FailedAuthentications {
  /** What the address's failures so far allow for this presented key (by fingerprint), before it is checked. */
  admit(req: Request, fingerprint: string): Promise<Admission>;
  /** Counts a failed authentication (401, or 403 for a refused address) of this key from this address; once per request. */
  count(req: Request, fingerprint: string): void;
  /** The 429 for a request whose key did not pass while the address is over its budget. */
  refuse(res: Response, admission: Admission): ApiError;
}

/**
 * How far the presented key is checked: `database` as usual, `memory` only
 * among keys this instance has already authenticated, `none` not at all.
 * `over`: the address is over its budget, so a key that does not pass gets 429.
 */
export type Admission = { over: false; check: "database" } | { over: true; retryAfter: number; check: "database" | "memory" | "none" };

const OPEN: Admission = { over: false, check: "database" };

export function registerRoutes(
  router: Router,
  routes: readonly RouteSpec[],
  deps: AppDeps,
  guards: AuthenticationGuards = { after: [] },
): void {
  const authenticated = [authenticate(deps, guards.failures), ...guards.after];
  const seen = new Set<string>();
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    if (route.callers.length === 0) {
      throw new Error(`Route ${id} declares no callers: every route must name the groups allowed to call it`);
    }
    if (seen.has(id)) throw new Error(`Route ${id} is declared twice`);
    seen.add(id);

    const chain: RequestHandler[] = [...authenticated, authorize(route.callers, deps)];
    if (route.body) chain.push(jsonBody());
    chain.push(async (req: Request, res: Response) => {
      const input = parseInput(route, req);
      const invoke = (ctx: HandlerContext) => runHandler(route, input, ctx);
      // ---- Writes: the handler, its audit entry and its Idempotency-Key answer in one transaction (write.ts).
      if (route.method !== "GET") {
        await runWrite(route, req, res, { deps, caller: req.caller! }, async (ctx) => {
          const result = await invoke(ctx);
          return result instanceof Versioned ? { body: result.body, etag: `"${result.etag}"` } : { body: result };
        });
        return;
      }
      // ---- Reads: the shared client, no audit.
      const ctx: HandlerContext = {
        deps,
        caller: req.caller!,
        // A read replica when DATABASE_READ_URL is set: GETs may lag behind writes by the replication delay.
        db: deps.db.reader,
        source: { actor: req.caller!.username },
        audit: () => Promise.reject(new Error(`${id} is a read: it cannot record audit entries`)),
        auditedWrite: () => Promise.reject(new Error(`${id} is a read: it cannot write`)),
      };
      // The version is read before the data: an answer is never older than its tag. It is sent with
      // the answer only, not with a failure of the handler.
      const listTag = route.etag ? `"${await route.etag(input, ctx)}"` : undefined;
      if (listTag !== undefined && matches(req.headers["if-none-match"], listTag)) {
        res.setHeader("ETag", listTag).status(304).end();
        return;
      }
      if (route.heavy && !(await takeHeavySlot(deps, req, res))) return;
      let result = await invoke(ctx);
      if (result instanceof Versioned) {
        const tag = `"${result.etag}"`;
        res.setHeader("ETag", tag);
        if (route.method === "GET" && matches(req.headers["if-none-match"], tag)) {
          res.status(304).end();
          return;
        }
        result = result.body;
      }
      if (listTag !== undefined) res.setHeader("ETag", listTag);
      res.status(route.successStatus ?? 200);
      if (result instanceof JsonText) res.type("application/json; charset=utf-8").send(result.text);
      else res.json(result);
    });
    router[route.method.toLowerCase() as "get" | "post" | "patch"](route.path, ...chain);
  }

  // A known path with another method: 405 naming the methods it has — after the key check, like any route.
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.includes("GET") ? [...methods, "HEAD"] : methods;
    router.all(path, ...authenticated, (req, res) => {
      res.setHeader("Allow", allow.join(", "));
      throw errors.methodNotAllowed(req.method, req.originalUrl.split("?")[0] ?? path);
    });
  }
}

/**
 * A slot of the heavy-list bulkhead, held until the answer is sent or the
 * client is gone ("close", also when SEND_TIMEOUT_MS cuts a stalled reader
 * off): that is when its memory is freed. A client that leaves while waiting
 * leaves the queue at once; one that waits past HEAVY_LIST_WAIT_MS gets 503
 * LISTS_BUSY; one still taking its answer HEAVY_LIST_DEADLINE_MS after the
 * slot came (a reader too slow, even a steady one) is cut off. False when the
 * client is gone: nothing is to be built or sent.
 */
async function takeHeavySlot(deps: AppDeps, req: Request, res: Response): Promise<boolean> {
  // Gone already (while its key was checked): "close" has passed and would never come.
  if (res.destroyed || req.socket.destroyed) return false;
  const gone = new AbortController();
  let release: (() => void) | undefined;
  let deadline: NodeJS.Timeout | undefined;
  res.once("close", () => {
    gone.abort();
    clearTimeout(deadline);
    release?.();
  });
  try {
    release = await deps.heavyLists.acquire(deps.config.heavyListWaitMs, gone.signal, String(req.caller!.id));
  } catch (error) {
    if (gone.signal.aborted) return false;
    if (!(error instanceof BulkheadTimeout)) throw error;
    const seconds = Math.ceil(deps.config.heavyListWaitMs / 1000);
    res.setHeader("Retry-After", String(seconds));
    throw errors.listsBusy(seconds);
  }
  const deadlineMs = deps.config.heavyListDeadlineMs;
  deadline = setTimeout(() => {
    deps.logger.warn(
      { method: req.method, path: req.path, heldBytes: req.socket.writableLength, heavyListDeadlineMs: deadlineMs },
      "full list not taken by its client within HEAVY_LIST_DEADLINE_MS: connection cut",
    );
    req.socket.destroy();
  }, deadlineMs);
  return true;
}

async function runHandler(route: RouteSpec, input: RouteInput, ctx: HandlerContext): Promise<unknown> {
  try {
    return await route.handler(input, ctx);
  } catch (error) {
    // A unique violation is named with the value the client sent.
    const violation = uniqueViolation(error);
    if (violation) throw errors.conflict(conflictMessage(violation, { ...asRecord(input.query), ...asRecord(input.body) }));
    throw error;
  }
}

function authenticate(deps: AppDeps, failures: FailedAuthentications | undefined): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    const fingerprint = keyFingerprint(key);
    const admission = failures ? await failures.admit(req, fingerprint) : OPEN;
    let caller: Caller | undefined;
    if (key !== undefined && admission.check === "database") caller = await deps.users.authenticate(key);
    if (key !== undefined && admission.check === "memory") caller = deps.users.authenticateFromMemory(key);
    if (!caller) {
      // Counted only when the key was checked: one that was not has already failed, or the address is guessing.
      if (admission.check === "database") failures?.count(req, fingerprint);
      if (admission.over) throw failures!.refuse(res, admission);
      deps.logger.info({ reason: key === undefined ? "missing or conflicting key" : "unknown or revoked key" }, "authentication failed");
      throw errors.unauthenticated();
    }
    req.caller = caller;
    const ctx = deps.requestContext.getStore();
    if (ctx) ctx.user = caller.username;
    if (caller.allowedAddresses && !caller.allowedAddresses.allows(req.ip)) {
      // Counted like a failed authentication by the per-address limit (http/rate-limit.ts): a key
      // used from the wrong place cannot be replayed without bound, nor flood the audit log.
      failures?.count(req, fingerprint);
      await refuseAddress(deps, caller, req.ip, ctx?.requestId);
      throw errors.addressNotAllowed();
    }
    next();
  };
}

/** A key used from elsewhere than its user's allowed addresses: logged (never the key) and recorded. */
async function refuseAddress(deps: AppDeps, caller: Caller, address: string | undefined, requestId: string | undefined) {
  // Behind a trusted proxy req.ip is the client's own X-Forwarded-For text: only an address is kept.
  const clientAddress = address !== undefined && isIP(address) ? address : "(not an IP address)";
  deps.logger.warn({ clientAddress }, "API key used from a client address not allowed for its user");
  try {
    await deps.onRefusedAddress({ username: caller.username, clientAddress, requestId });
  } catch (error) {
    // The refusal stands whether or not it could be recorded.
    deps.logger.error({ err: error }, "could not record a refused client address");
  }
}

/**
 * The key from `X-API-Key` or `Authorization: Bearer`. Both may be sent only
 * with the same value; an Authorization header of another scheme counts as a
 * bad key rather than being ignored, and so does either header sent twice
 * (Node joins two X-API-Key into one value, but keeps only the first
 * Authorization: the second must not go unseen).
 */
function presentedKey(req: Request): string | undefined {
  const header = req.headers["x-api-key"];
  const authorization = req.headers.authorization;
  let bearer: string | undefined;
  if (authorization !== undefined) {
    if (req.headersDistinct.authorization!.length > 1) return undefined;
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match) return undefined;
    bearer = match[1];
  }
  if (Array.isArray(header)) return undefined;
  const apiKey = header?.trim();
  if (apiKey !== undefined && bearer !== undefined && apiKey !== bearer) return undefined;
  return apiKey || bearer || undefined;
}

function authorize(callers: readonly CallerGroup[], deps: AppDeps): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!deps.callers.may(req.caller!.username, callers)) throw errors.forbidden();
    next();
  };
}

/** If-None-Match: a list of tags, weak or strong, or `*`. */
function matches(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const candidate = t.trim();
    return candidate === "*" || candidate === tag || candidate === `W/${tag}`;
  });
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

function parseInput(route: RouteSpec, req: Request): RouteInput {
  const input: RouteInput = { query: undefined, body: undefined, headers: undefined };
  if (route.query) {
    const parsed = route.query.safeParse(req.query, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.query = parsed.data;
  }
  if (route.body) {
    if (req.body === undefined) {
      throw errors.validation("body: expected a JSON object sent with Content-Type: application/json");
    }
    const parsed = route.body.safeParse(req.body, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.body = parsed.data;
  }
  const declared = route.headers ? Object.keys((route.headers as z.ZodObject).shape) : [];
  if (route.method !== "GET" && req.headers["if-match"] !== undefined && !declared.includes("If-Match")) {
    // A client asking for a conditional write must never get an unconditional one: this route has no
    // version to compare (only update-cosmetic does).
    throw errors.validation("If-Match: this route has no ETag to match, so it cannot make the write conditional; send it without If-Match");
  }
  if (route.headers) {
    const names = declared;
    const sent = Object.fromEntries(names.flatMap((name) => {
      const value = req.headers[name.toLowerCase()];
      return value === undefined ? [] : [[name, value]];
    }));
    const parsed = route.headers.safeParse(sent, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.headers = parsed.data;
  }
  return input;
}
