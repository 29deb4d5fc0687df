import { pino, type DestinationStream, type Logger } from "pino";
import { requestContext } from "./context.js";

export type { Logger };

/**
 * Paths that must never reach a log line in clear. We never log headers or
 * keys on purpose; this is the net under that rule.
 */
const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  "req.headers.authorization",
  'headers["x-api-key"]',
  "headers.authorization",
  "apiKey",
  "*.apiKey",
  "key",
  "*.key",
];

/**
 * JSON lines on stdout by default, written asynchronously (a synchronous
 * write per request line measurably slowed point reads); the entry point
 * flushes it before exiting.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      // Every line logged while serving a request names the request and its caller.
      mixin() {
        const ctx = requestContext.getStore();
        if (!ctx) return {};
        return ctx.user ? { reqId: ctx.requestId, user: ctx.user } : { reqId: ctx.requestId };
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
