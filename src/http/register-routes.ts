import type { Request, RequestHandler, Response, Router } from "express";
import type { z } from "zod";
import { type AuthenticationGuards, authenticate, authorize, type Step } from "../auth/authenticate.js";
import { errors } from "../core/errors.js";
import { inSpan, tracing } from "../core/tracing.js";
import { foreignKeyViolation, uniqueViolation } from "../db/prisma-errors.js";
import { conflictMessage, generatedKeyCollision } from "../entities/constraints.js";
import { jsonBody } from "./body.js";
import type { AppDeps } from "./deps.js";
import { runRead } from "./read.js";
import type { RouteInput, RouteSpec } from "./route.js";
import { PARSE_OPTIONS, validationError } from "./validation.js";
import { runWrite } from "./write.js";

/** A route compiled into one function: its steps, then its read or write (a rejection is the answer). */
export type CompiledRoute = (req: Request, res: Response) => Promise<void>;

/**
 * Wires each declared route into Express: the key check, the rate limits,
 * its allow-list, the body parser when it takes a body, validation, then the
 * read path (read.ts) or the write path (write.ts), compiled into one
 * handler per route rather than a chain of middleware (each layer costs the
 * router a turn). Returns the compiled routes by method and path, for the
 * direct dispatch in front of Express's routing (directRoutes).
 */
export function registerRoutes(
  router: Router,
  routes: readonly RouteSpec[],
  deps: AppDeps,
  guards: AuthenticationGuards = { after: [] },
): Map<string, Map<string, CompiledRoute>> {
  const authenticated: Step[] = [inStepSpan("authenticate", authenticate(deps, guards.failures)), ...guards.after];
  const compiled = new Map<string, Map<string, CompiledRoute>>();
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    if (route.callers.length === 0) {
      throw new Error(`Route ${id} declares no callers: every route must name the groups allowed to call it`);
    }
    const byPath = compiled.get(route.method) ?? new Map<string, CompiledRoute>();
    if (byPath.has(route.path)) throw new Error(`Route ${id} is declared twice`);
    compiled.set(route.method, byPath);

    const steps: Step[] = [...authenticated, authorize(route.callers, deps)];
    if (route.body) steps.push(jsonBody());
    const { read, write } = route;
    // The request headers the route reads, known once rather than on every request.
    const declared = route.headers ? Object.keys((route.headers as z.ZodObject).shape) : [];
    let last: Step;
    if (read) {
      // A read inserts nothing, so no unique violation to name.
      last = (req, res) => {
        const input = parseInput(route, declared, req);
        return runRead(route, input, req, res, deps, (ctx) => read(input, ctx));
      };
    } else {
      const { checkFirst } = route;
      last = async (req, res) => {
        const input = parseInput(route, declared, req);
        if (checkFirst) await checkFirst(input, deps.config);
        return runWrite(route, req, res, deps, (ctx) => constraintsAnswered(route, write!(input, ctx), input));
      };
    }
    const handle = compile([...steps, last], `/api${route.path}`);
    byPath.set(route.path, handle);
    router[route.method.toLowerCase() as "get" | "post" | "patch"](route.path, handle);
  }

  // A known path with another method: 405 naming the methods it has — after the key check, like any route.
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.includes("GET") ? [...methods, "HEAD"] : methods;
    const refuse: Step = (req, res) => {
      res.setHeader("Allow", allow.join(", "));
      throw errors.methodNotAllowed(req.method, req.originalUrl.split("?")[0] ?? path);
    };
    router.all(path, compile([...authenticated, refuse]));
  }
  return compiled;
}

/** A step in a span of its own when tracing is on (core/tracing.ts); the step itself otherwise. */
function inStepSpan(name: string, step: Step): Step {
  if (!tracing.on) return step;
  return (req, res) => inSpan(name, {}, async () => step(req, res));
}

/**
 * Runs the steps in turn, awaiting only those that return a promise. The
 * route is named for the metrics' label (Metrics.requestFinished).
 */
function compile(steps: readonly Step[], metricsRoute?: string): CompiledRoute {
  return async (req, res) => {
    if (metricsRoute !== undefined) (res.locals as { route?: string }).route = metricsRoute;
    for (const step of steps) {
      const pending = step(req, res);
      if (pending !== undefined) await pending;
    }
  };
}

/**
 * The compiled routes answered before Express's routing, by exact method and
 * path (`prefix` + the route's path, no query): a route's request goes
 * through no router layer. HEAD is a GET, as in Express. Anything else (a
 * path differing in case or by a trailing slash, another method) goes on to
 * the routers, where the same compiled handlers are registered, and to the
 * 405s and 404s.
 */
export function directRoutes(prefix: string, compiled: ReadonlyMap<string, ReadonlyMap<string, CompiledRoute>>): RequestHandler {
  const byMethod = new Map([...compiled].map(([method, byPath]) => [method, new Map([...byPath].map(([path, handle]) => [`${prefix}${path}`, handle]))]));
  return (req, res, next) => {
    const byPath = byMethod.get(req.method === "HEAD" ? "GET" : req.method);
    if (byPath === undefined) return next();
    const url = req.url;
    const end = url.indexOf("?");
    const handle = byPath.get(end === -1 ? url : url.slice(0, end));
    if (handle === undefined) return next();
    handle(req, res).catch(next);
  };
}

/** A violated constraint, answered as the route declares: a unique value is a 409 naming it, an unknown reference its kind. */
async function constraintsAnswered<T>(route: RouteSpec, handled: Promise<T>, input: RouteInput): Promise<T> {
  try {
    return await handled;
  } catch (error) {
    const sent = { ...asRecord(input.query), ...asRecord(input.body) };
    const reference = route.unknownReference && foreignKeyViolation(error);
    if (reference) {
      const message = route.unknownReference!.of.unknownReference(sent, reference.constraint);
      throw route.unknownReference!.kind === "VALIDATION" ? errors.validation(message) : errors.referenceNotFound(message);
    }
    const violation = uniqueViolation(error);
    // An id the sequence drew that was already taken is no duplicate of the client's: the write is retried (http/write.ts).
    if (violation && !generatedKeyCollision(error)) throw errors.duplicate(conflictMessage(violation, sent));
    throw error;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

function parseInput(route: RouteSpec, declared: readonly string[], req: Request): RouteInput {
  const input: RouteInput = { query: undefined, body: undefined, headers: undefined };
  if (route.query) {
    const parsed = route.query.safeParse(req.query, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.query = parsed.data;
  } else {
    // A route without query parameters (the writes: their input is the body) refuses any, as a typo or a
    // misplaced field (`?id=2` beside a body naming another id) must not be silently ignored.
    const sent = Object.keys(asRecord(req.query));
    if (sent.length > 0) throw errors.validation(`${sent.join(", ")}: unknown query parameter; this route takes none (send its fields in the JSON body)`);
  }
  if (route.body) {
    if (req.body === undefined) {
      throw errors.validation("body: expected a JSON object sent with Content-Type: application/json");
    }
    const parsed = route.body.safeParse(req.body, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.body = parsed.data;
  }
  if (route.method !== "GET" && req.headers["if-match"] !== undefined && !declared.includes("If-Match")) {
    // A client asking for a conditional write must never get an unconditional one: this route has no
    // version to compare (only update-cosmetic does).
    throw errors.validation("If-Match: this route has no ETag to match, so it cannot make the write conditional; send it without If-Match");
  }
  if (route.headers) {
    const sent = Object.fromEntries(
      declared.flatMap((name) => {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? [] : [[name, value]];
      }),
    );
    const parsed = route.headers.safeParse(sent, PARSE_OPTIONS);
    if (!parsed.success) throw validationError(parsed.error);
    input.headers = parsed.data;
  }
  return input;
}
