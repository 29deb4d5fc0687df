import { isIP } from "node:net";
import type { Request, Response } from "express";
import { keyFingerprint } from "../core/api-keys.js";
import type { CallerGroup } from "../core/config.js";
import type { requestContext } from "../core/context.js";
import { type ApiError, errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { annotate, tracing } from "../core/tracing.js";
import type { Caller } from "./caller.js";
import type { CallerDirectory } from "./callers.js";

declare module "express-serve-static-core" {
  interface Request {
    caller?: Caller;
  }
}

/**
 * One step of a route's request path (http/register-routes.ts compiles a
 * route's steps into one handler): it passes by returning, refuses by
 * throwing the answer. Returns a promise only when it has to wait.
 */
export type Step = (req: Request, res: Response) => void | Promise<void>;

/** The rate limits around the key check: the one on failed authentication, and steps run once the caller is known. */
export interface AuthenticationGuards {
  failures?: FailedAuthentications | undefined;
  after: Step[];
}

/** A limit on failed authentication by client address (limits/rate-limit.ts), consulted by the key check. */
export interface FailedAuthentications {
  /**
   * What the address's failures so far allow for this presented key (by fingerprint, computed when
   * needed), before it is checked. `known`: the key's user, when this instance holds the key in memory
   * and the user may call from this address; the per-user limit may count the request in the same step.
   */
  admit(req: Request, fingerprint: () => string, known?: Caller): Promise<Admission>;
  /** Counts a failed authentication (401, or 403 for a refused address) of this key from this address; once per request. */
  count(req: Request, fingerprint: () => string): void;
  /** The 429 for a request whose key did not pass while the address is over its budget. */
  refuse(res: Response, admission: Admission): ApiError;
}

/**
 * How far the presented key is checked: `database` as usual, `memory` only
 * among keys this instance has already authenticated, `none` not at all.
 * `over`: the address is over its budget, so a key that does not pass gets 429.
 */
export type Admission = { over: false; check: "database" } | { over: true; retryAfter: number; check: "database" | "memory" | "none" };

/** A key used from a client address its user may not use it from (the request was refused with 403). */
export interface RefusedAddress {
  username: string;
  clientAddress: string | undefined;
  requestId: string | undefined;
}

/** What the key check needs of the service: the request path's dependencies (http/deps.ts) are one. */
export interface AuthenticationDeps {
  /** Finds a key's user: in this instance's memory of keys already seen, or in the database too. */
  users: {
    authenticate(key: string): Promise<Caller | undefined>;
    authenticateFromMemory(key: string): Caller | undefined;
  };
  callers: CallerDirectory;
  logger: Logger;
  requestContext: typeof requestContext;
  /** Where refused client addresses are recorded (beyond the warn log line): the audit log. */
  onRefusedAddress: (event: RefusedAddress) => Promise<void>;
}

const OPEN: Admission = { over: false, check: "database" };

/** The key check: sets req.caller, or answers 401 (429 for an address over its failure budget, 403 for a refused address). */
export function authenticate(deps: AuthenticationDeps, failures: FailedAuthentications | undefined): Step {
  return async (req: Request, res: Response) => {
    const key = presentedKey(req);
    // Hashed only if the failure limit needs it: most requests have a good key from an address in good standing.
    let hashed: string | undefined;
    const fingerprint = () => (hashed ??= keyFingerprint(key));
    const known = failures && key !== undefined ? deps.users.authenticateFromMemory(key) : undefined;
    const allowedHere = known && (!known.allowedAddresses || known.allowedAddresses.allows(req.ip));
    const admission = failures ? await failures.admit(req, fingerprint, allowedHere ? known : undefined) : OPEN;
    let caller: Caller | undefined;
    // A key already found in memory above is not hashed and looked up a second time.
    if (key !== undefined && admission.check === "database") caller = known ?? (await deps.users.authenticate(key));
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
      // Counted like a failed authentication by the per-address limit (limits/rate-limit.ts): a key
      // used from the wrong place cannot be replayed without bound, nor flood the audit log.
      failures?.count(req, fingerprint);
      await refuseAddress(deps, caller, req.ip, ctx?.requestId);
      throw errors.addressNotAllowed();
    }
  };
}

/** The allow-list of a route: 403 unless the caller is in one of its groups. */
export function authorize(callers: readonly CallerGroup[], deps: Pick<AuthenticationDeps, "callers">): Step {
  return (req: Request) => {
    const username = req.caller!.username;
    // The caller's groups on the request's span: who called, never the key (core/tracing.ts).
    if (tracing.on) annotate({ "app.caller.groups": [...deps.callers.groupsOf(username)].sort().join(",") });
    if (deps.callers.may(username, callers)) return;
    throw deps.callers.groupsOf(username).size === 0 ? errors.inNoCallerGroup() : errors.forbidden();
  };
}

/** A key used from elsewhere than its user's allowed addresses: logged (never the key) and recorded. */
async function refuseAddress(deps: AuthenticationDeps, caller: Caller, address: string | undefined, requestId: string | undefined) {
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
export function presentedKey(req: Request): string | undefined {
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
