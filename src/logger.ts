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
 * Lines on stdout are written in blocks of this many bytes (about 25 request
 * lines), or every LOG_FLUSH_MS, whichever comes first: one write per line
 * (a thread-pool hop and a system call each) cost a point read more than the
 * line itself. What is held is written at exit, also on an uncaught
 * exception (pino flushes on the process's exit); a SIGKILL or a crash of
 * the runtime loses at most one block.
 */
const LOG_BLOCK_BYTES = 4096;
const LOG_FLUSH_MS = 250;

/** The default destination (stdout, fd 1): asynchronous, in blocks (above). */
export function inBlocks(fd = 1): ReturnType<typeof pino.destination> {
  const destination = pino.destination({ dest: fd, sync: false, minLength: LOG_BLOCK_BYTES });
  const flushing = setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  destination.once("close", () => clearInterval(flushing));
  return destination;
}

/**
 * JSON lines on stdout by default, written asynchronously in blocks (a
 * synchronous write per request line measurably slowed point reads); the
 * entry point flushes it before exiting.
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
    destination ?? (level === "silent" ? pino.destination({ dest: 1, sync: false }) : inBlocks()),
  );
}
