import { z } from "zod";
import { createDocument, type oas31, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from "zod-openapi";
import { ERROR_CATALOGUE, type ErrorKind } from "../core/errors.js";
import { INT32_MAX } from "../fields/rules.js";
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN } from "../http/idempotency.js";
import type { RouteSpec } from "../http/route.js";
import { RESPONSE_HEADERS, type ResponseHeader } from "./openapi-headers.js";

/**
 * The OpenAPI 3.1 document, made from the route declarations: the schemas
 * that validate each request and shape each response are the ones documented.
 */
const errorBody = z
  .strictObject({
    code: z.int().min(400).max(599).meta({ description: "The HTTP status of the failure" }),
    message: z.string().meta({ description: "What went wrong; a 400 names each bad field" }),
  })
  .meta({ id: "Error", description: "The body of every failure", example: { code: 400, message: "gradeId: expected an integer" } });

/** Every POST takes one (http/idempotency.ts). */
const idempotencyHeader = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN)
    .optional()
    .meta({
      param: {
        description:
          "Makes a retry safe: a request resent with the same key (same API user, by default within 24 hours) is not run again; " +
          "its first answer comes back, with Idempotent-Replayed: true (a 400 or 5xx is not kept). The same key with " +
          "another body or route: 422. 1–255 printable ASCII characters, never an API key: a UUID per request.",
        example: "5f0c6f7e-2d4b-4a53-9a7e-0d7c1b1e9a41",
      },
    }),
});

const GROUP_NAMES = { A: "user-A", B: "user-B", C: "user-C", D: "user-D (the website)" } as const;

/** Errors only some routes answer: documented on those alone. */
const ONLY_ON: Partial<Record<ErrorKind, (route: RouteSpec) => boolean>> = {
  LISTS_BUSY: (route) => route.heavy === true,
  SYNC_TOKEN_EXPIRED: (route) => route.list !== undefined,
  EVENT_ID_EXPIRED: (route) => route.eventStream === true,
  TOO_MANY_STREAMS: (route) => route.eventStream === true,
  // Besides /readyz (no route of the document), only a stream asked for while the instance stops; other routes are served to the end.
  SHUTTING_DOWN: (route) => route.eventStream === true,
  PLAYER_ERASED: (route) => route.errors?.[410] !== undefined, // the routes that name a player and say so
  // Reads go on while writes are frozen.
  WRITES_FROZEN: (route) => route.method !== "GET",
};

/** A status's meanings on this route; several are each named by their Error-Name. */
function meaningsOf(status: number, route: RouteSpec): string {
  const kinds = (Object.entries(ERROR_CATALOGUE) as [ErrorKind, (typeof ERROR_CATALOGUE)[ErrorKind]][]).filter(
    ([kind, e]) => e.status === status && (ONLY_ON[kind]?.(route) ?? true),
  );
  return kinds.length === 1 ? kinds[0]![1].meaning : kinds.map(([kind, e]) => `${kind}: ${e.meaning}`).join(" ");
}

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: errorBody } } };
}

/** The name under components.headers: the header's name without its dashes (`X-Request-Id` → `XRequestId`). */
const componentName = (header: ResponseHeader) => header.replaceAll("-", "");

/** The statuses answered before the API key is checked (or by the HTTP server): no rate-limit headers. */
const UNAUTHENTICATED_STATUSES = new Set([401, 408, 431]);

/** The headers a route's answer with this status can carry. */
function responseHeaders(route: RouteSpec, status: number): Record<string, oas31.ReferenceObject> {
  const success = route.successStatus ?? 200;
  const names: ResponseHeader[] = ["X-Request-Id"];
  if (status >= 400) names.push("Error-Name");
  if ((route.etag || route.versioned) && (status === success || status === 304)) names.push("ETag");
  if (route.paged && status === success) names.push("Link");
  // A replay answers what the first request answered: its success, or a failure of its own (404, 409, 412).
  if (route.method === "POST" && (status === success || route.errors?.[status as 404 | 409 | 410 | 412])) names.push("Idempotent-Replayed");
  if (!UNAUTHENTICATED_STATUSES.has(status)) names.push("RateLimit", "RateLimit-Policy");
  if (status === 429 || status === 503) names.push("Retry-After");
  if (route.list && status === success) names.push("Link", "Sync-Token");
  if (route.eventStream && status === success) names.push("Cache-Control", "X-Accel-Buffering");
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${componentName(name)}` }]));
}

/** The conditional GETs take the ETag they were given (http/read.ts). */
const ifNoneMatchHeader = z.object({
  "If-None-Match": z
    .string()
    .optional()
    .meta({
      param: {
        description:
          "The ETag of an earlier answer of this operation (several may be listed, or `*`): while the answer is unchanged " +
          "the server replies 304 Not Modified with no body, without building it.",
        example: '"maps-v3"',
      },
    }),
});

/** The failures a route can answer with: the ones all routes share, and its own. */
export function documentedStatuses(route: RouteSpec): number[] {
  // 408 and 431 are answered by the HTTP server itself, before any route (service/http-server.ts).
  const statuses = [400, 401, 403, 408, 429, 431, 500, 503];
  if (route.body) statuses.push(413, 415);
  if (route.method === "POST") statuses.push(422);
  if (route.list || route.eventStream) statuses.push(410);
  for (const s of Object.keys(route.errors ?? {})) statuses.push(Number(s));
  return [...new Set(statuses)].sort((a, b) => a - b);
}

function operation(route: RouteSpec): ZodOpenApiOperationObject {
  const callers = route.callers.map((g) => GROUP_NAMES[g]).join(", ");
  const conditional = route.method === "GET" && (route.etag !== undefined || route.versioned === true);
  const success = route.successStatus ?? 200;
  const responses: Record<string, ZodOpenApiResponseObject> = {
    [String(success)]: {
      description: success === 201 ? "Created" : "OK",
      headers: responseHeaders(route, success),
      content: { [route.eventStream ? "text/event-stream" : "application/json"]: { schema: route.response } },
    },
  };
  if (conditional) {
    responses["304"] = {
      description: "Not Modified: the answer is the same as the one whose ETag was sent in If-None-Match.",
      headers: responseHeaders(route, 304),
    };
  }
  for (const status of documentedStatuses(route)) {
    const own = route.errors?.[status as 403 | 404 | 409 | 410 | 412];
    const description = own ?? meaningsOf(status, route);
    responses[String(status)] = { ...errorResponse(description), headers: responseHeaders(route, status) };
  }
  const op: ZodOpenApiOperationObject = {
    operationId: route.path
      .split("/")
      .filter(Boolean)
      .join("_")
      .replace(/-([a-zA-Z])/g, (_, c: string) => c.toUpperCase()),
    summary: route.summary,
    description:
      `${route.description}\n\n**Callers:** ${callers} (caller groups ${route.callers.join(", ")}).` + (route.version ? ` **Version:** ${route.version}.` : ""),
    tags: [route.path.split("/")[1]!],
    responses,
    "x-callers": [...route.callers],
    "x-version": route.version,
  };
  // A POST also takes Idempotency-Key (http/idempotency.ts); a conditional GET, If-None-Match.
  const headers = [
    route.headers as z.ZodObject | undefined,
    route.method === "POST" ? idempotencyHeader : undefined,
    conditional ? ifNoneMatchHeader : undefined,
  ].filter((h): h is z.ZodObject => h !== undefined);
  const header = headers.length > 1 ? headers.reduce((all, h) => all.extend(h.shape)) : headers[0];
  if (route.query || header) {
    // zod-openapi reads every key it is given: a key is set only when it has a schema.
    op.requestParams = {
      ...(route.query ? { query: route.query as z.ZodObject } : {}),
      ...(header ? { header } : {}),
    };
  }
  if (route.body) op.requestBody = { required: true, content: { "application/json": { schema: route.body } } };
  return op;
}

/**
 * Where the API is. Given the service's public URL (PUBLIC_URL, or the origin a request came to), its
 * /api; without one (the committed docs/openapi.json), a template whose `origin` a generator or its
 * user fills in: a relative URL would leave generated clients without a usable default.
 */
export function apiServer(publicUrl: string | undefined): oas31.ServerObject {
  if (publicUrl !== undefined) return { url: `${publicUrl}/api`, description: "This server" };
  return {
    url: "{origin}/api",
    description: "The server of your deployment",
    variables: {
      origin: {
        default: "http://localhost:3000",
        description: "Where the service is reached: scheme, host, port and any path prefix, without a trailing slash",
      },
    },
  };
}

/** An integer written without a format gets the one its range fits, for generators that map it to a type. */
function integerFormat({ jsonSchema }: { jsonSchema: { type?: unknown; format?: unknown; minimum?: unknown; maximum?: unknown } }): void {
  if (jsonSchema.type !== "integer" || jsonSchema.format !== undefined) return;
  const fits = (n: unknown) => typeof n === "number" && n >= -INT32_MAX - 1 && n <= INT32_MAX;
  jsonSchema.format = fits(jsonSchema.minimum) && fits(jsonSchema.maximum) ? "int32" : "int64";
}

/** What each tag (a path's first segment) holds, for the docs page's sections. */
const TAGS: Record<string, string> = {
  player: "Players: the lists and the lookup by nickname",
  cosmetic: "Cosmetics: read one, update one",
  form: "Form answers",
  infecte2: "Infected mode (v2) statistics",
  "temporary-item": "Temporary shop items",
  website: "Reward logs, written by the community website",
  inscription: "Registering an API user",
  freebuild: "Freebuild worlds",
  parkour: "Parkour maps",
  events: "The live event stream (server-sent events)",
  admin: "The admin console's routes: API users, audit log, webhooks",
};

/** The document, with the template server; the service serves it with its own URL (api-document/docs.ts). */
export function buildOpenApiDocument(routes: readonly RouteSpec[]): oas31.OpenAPIObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    (item as Record<string, ZodOpenApiOperationObject>)[route.method.toLowerCase()] = operation(route);
  }
  return createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Game community API",
        version: "2.1.0",
        description:
          "The HTTP/JSON back-end of a game-server community. Every route needs an API key (X-API-Key, or " +
          "Authorization: Bearer) and admits only the caller groups it names. Checks run in this order: 429 for a bad " +
          "key from an address that sent too many, 401, 429 for a user over its budget, 403, 400, then 404/409. " +
          "Every failure is `{code, message}` with `code` equal to the HTTP status. Timestamps are written " +
          "yyyy-mm-ddThh:mm:ssZ (UTC); inputs accept ISO 8601 with Z or an offset. Unknown body fields and query " +
          "parameters are a 400. Each API user may send RATE_LIMIT_PER_MINUTE requests a minute (600 unless the " +
          "operator changed it): beyond, 429 with Retry-After. Every answer carries X-Request-Id (send your own to " +
          "correlate: 1 to 128 of A-Z a-z 0-9 . _ : -). The lists and get-cosmetic send an ETag and answer If-None-Match " +
          "with 304; every list also takes limit and cursor (pages, Link rel=next) and since (only the rows changed since the " +
          "Sync-Token of an earlier answer); every POST takes an Idempotency-Key and can then be retried safely; 429 and 503 say in Retry-After " +
          "when to retry.",
      },
      servers: [apiServer(undefined)],
      // Each operation is tagged with its path's first segment; the tags are declared, in the order of the routes.
      tags: [...new Set(routes.map((route) => route.path.split("/")[1]!))].map((name) => ({ name, description: TAGS[name] ?? name })),
      security: [{ ApiKey: [] }, { Bearer: [] }],
      components: {
        securitySchemes: {
          ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "gsk_ followed by 43 base64url characters" },
          Bearer: { type: "http", scheme: "bearer", description: "The same key, as Authorization: Bearer <key>" },
        },
        headers: Object.fromEntries(Object.entries(RESPONSE_HEADERS).map(([name, header]) => [componentName(name as ResponseHeader), header])),
      },
      paths,
    },
    { override: integerFormat },
  );
}
