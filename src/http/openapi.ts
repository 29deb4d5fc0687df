import { z } from "zod";
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from "zod-openapi";
import { ERROR_CATALOGUE, type ErrorKind } from "../errors.js";
import type { RouteSpec } from "./route.js";

/**
 * The OpenAPI 3.1 document, made from the route declarations: the schemas
 * that validate each request and shape each response are the ones documented.
 */
export const errorBody = z
  .strictObject({
    code: z.int().meta({ description: "The HTTP status of the failure" }),
    message: z.string().meta({ description: "What went wrong; a 400 names each bad field" }),
  })
  .meta({ id: "Error", description: "The body of every failure", example: { code: 400, message: "gradeId: expected an integer" } });

/** Every POST takes one (http/write.ts). */
const idempotencyHeader = z.object({
  "Idempotency-Key": z
    .string()
    .regex(/^[\x20-\x7E]{1,255}$/)
    .optional()
    .meta({
      param: {
        description:
          "Makes a retry safe: a request resent with the same key (by the same API user, within 24 hours) is not run " +
          "again; it gets the first answer again, same status and body, with the header Idempotent-Replayed: true. " +
          "Concurrent requests with one key have one effect. A 400 is not kept (fix the body and retry with the same key); " +
          "neither is a 5xx. The same key with another body or on another route is a 422. 1 to 255 printable ASCII " +
          "characters; a UUID per logical request is a good choice.",
        example: "5f0c6f7e-2d4b-4a53-9a7e-0d7c1b1e9a41",
      },
    }),
});

const GROUP_NAMES = { A: "user-A", B: "user-B", C: "user-C", D: "user-D (the website)" } as const;

/** Errors only some routes answer: documented on those alone. */
const ONLY_ON: Partial<Record<ErrorKind, (route: RouteSpec) => boolean>> = { LISTS_BUSY: (route) => route.heavy === true };

function meaningsOf(status: number, route: RouteSpec): string {
  return (Object.entries(ERROR_CATALOGUE) as [ErrorKind, (typeof ERROR_CATALOGUE)[ErrorKind]][])
    .filter(([kind, e]) => e.status === status && (ONLY_ON[kind]?.(route) ?? true))
    .map(([, e]) => e.meaning)
    .join(" ");
}

function errorResponse(description: string) {
  return { description, content: { "application/json": { schema: errorBody } } };
}

/** The headers of the rate limits (http/rate-limit.ts), declared once and referenced by every operation. */
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description:
      'The per-user limit (IETF draft 8 of the RateLimit header fields): requests left in this window (r) and seconds until ' +
      'it ends (t), e.g. `"user"; r=599; t=42`. Absent when rate limiting is off, or could not be checked.',
    schema: { type: "string" },
  },
  RateLimitPolicy: {
    description: 'The per-user policy: requests allowed (q) per window of w seconds, e.g. `"user"; q=600; w=60`. No partition key (pk): it would name the user.',
    schema: { type: "string" },
  },
  RetryAfter: {
    description: "Seconds to wait before retrying.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  RetryAfterListsBusy: {
    description: "With LISTS_BUSY (every full-list slot stayed taken): seconds to wait before retrying.",
    schema: { type: "integer", minimum: 1 },
  },
} as const;
const headerRef = (name: keyof typeof RATE_LIMIT_HEADERS) => ({ $ref: `#/components/headers/${name}` });
const limitHeaders = { RateLimit: headerRef("RateLimit"), "RateLimit-Policy": headerRef("RateLimitPolicy") };

function tooManyRequests(route: RouteSpec): ZodOpenApiResponseObject {
  return {
    ...errorResponse(
      `${meaningsOf(429, route)} The per-user limit also sends RateLimit and RateLimit-Policy; the per-address limit on invalid keys ` +
        "answers with Retry-After alone, and never to a valid key used from an allowed address.",
    ),
    headers: { "Retry-After": headerRef("RetryAfter"), ...limitHeaders },
  };
}

/** The failures a route can answer with: the ones all routes share, and its own. */
export function documentedStatuses(route: RouteSpec): number[] {
  // 408 and 431 are answered by the HTTP server itself, before any route (http/http-server.ts).
  const statuses = [400, 401, 403, 408, 429, 431, 500, 503];
  if (route.body) statuses.push(413, 415);
  if (route.method === "POST") statuses.push(422);
  for (const s of Object.keys(route.errors ?? {})) statuses.push(Number(s));
  return statuses.sort((a, b) => a - b);
}

function operation(route: RouteSpec): ZodOpenApiOperationObject {
  const callers = route.callers.map((g) => GROUP_NAMES[g]).join(", ");
  const responses: Record<string, ZodOpenApiResponseObject> = {
    [String(route.successStatus ?? 200)]: {
      description: route.successStatus === 201 ? "Created" : "OK",
      headers: limitHeaders,
      content: { "application/json": { schema: route.response } },
    },
  };
  if (route.etag || route.versioned) {
    responses["304"] = {
      description: "Not Modified: the answer is the same as the one whose ETag was sent in If-None-Match.",
    };
  }
  for (const status of documentedStatuses(route)) {
    const own = route.errors?.[status as 404 | 409 | 412];
    const response: ZodOpenApiResponseObject = status === 429 ? tooManyRequests(route) : errorResponse(own ?? meaningsOf(status, route));
    if (status === 503 && route.heavy) response.headers = { "Retry-After": headerRef("RetryAfterListsBusy") };
    responses[String(status)] = response;
  }
  const op: ZodOpenApiOperationObject = {
    operationId: route.path.split("/").filter(Boolean).join("_").replace(/-([a-zA-Z])/g, (_, c: string) => c.toUpperCase()),
    summary: route.summary,
    description:
      `${route.description}\n\n**Callers:** ${callers} (caller groups ${route.callers.join(", ")}).` +
      (route.version ? ` **Version:** ${route.version}.` : ""),
    tags: [route.path.split("/")[1]!],
    responses,
    "x-callers": [...route.callers],
    ...(route.version ? { "x-version": route.version } : {}),
  };
  // A POST also takes Idempotency-Key (http/write.ts).
  const headers = [route.headers as z.ZodObject | undefined, route.method === "POST" ? idempotencyHeader : undefined].filter(
    (h): h is z.ZodObject => h !== undefined,
  );
  const header = headers.length > 1 ? headers.reduce((all, h) => all.extend(h.shape)) : headers[0];
  if (route.query || header) {
    op.requestParams = {
      ...(route.query ? { query: route.query as z.ZodObject } : {}),
      ...(header ? { header } : {}),
    };
  }
  if (route.body) op.requestBody = { required: true, content: { "application/json": { schema: route.body } } };
  return op;
}

export function buildOpenApiDocument(routes: readonly RouteSpec[]): oas31.OpenAPIObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    (item as Record<string, ZodOpenApiOperationObject>)[route.method.toLowerCase()] = operation(route);
  }
  return createDocument({
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
        "operator changed it): beyond, 429 with Retry-After.",
    },
    servers: [{ url: "/api", description: "This server" }],
    security: [{ ApiKey: [] }, { Bearer: [] }],
    components: {
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "gsk_ followed by 43 base64url characters" },
        Bearer: { type: "http", scheme: "bearer", description: "The same key, as Authorization: Bearer <key>" },
      },
      headers: RATE_LIMIT_HEADERS,
    },
    paths,
  });
}
