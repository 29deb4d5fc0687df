/**
 * The headers a JSON API needs, set on every answer by the request's first
 * middleware (request-context.ts): helmet's full chain of middleware cost
 * ~28 µs a request for headers that mostly concern HTML pages. The docs page,
 * the only HTML, gets helmet's (api-document/docs.ts). The answers the HTTP server
 * writes itself (http-server.ts) carry them too.
 */
export const JSON_HEADERS: readonly (readonly [string, string])[] = [
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "DENY"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Strict-Transport-Security", "max-age=31536000; includeSubDomains"],
];
