import { type DestinationStream, type Logger, pino } from "pino";
import { type RequestContext, requestContext } from "./context.js";

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
 * Lines on stdout are written in blocks of this many bytes (about 70 request
 * lines), or every LOG_FLUSH_MS, whichever comes first: one write per line
 * (a thread-pool hop and a system call each) cost a point read more than the
 * line itself (bench/parts.ts). What is held is written at exit, also on an
 * uncaught exception (pino flushes on the process's exit); a SIGKILL or a
 * crash of the runtime loses at most one block.
 */
const LOG_BLOCK_BYTES = 16384;
const LOG_FLUSH_MS = 250;

/**
 * Bytes of log lines an instance holds while its stdout does not take them (a
 * pipe whose reader stopped reading or fell behind: a paused terminal, a stuck
 * log shipper, a parent process that does not drain it). Past it, lines are
 * dropped and counted, and a warning says how many once stdout takes lines
 * again. Unbounded, an unread stdout grew the heap by every line logged until
 * the process died at V8's heap limit (about 4 GB when started without
 * npm start's flags).
 */
export const LOG_BUFFER_BYTES = 4 * 1_048_576;
/** At exit, what stdout holds is written only if it took something this recently: an unread pipe must not hold the exit forever. */
const STUCK_MS = 1_000;

/**
 * JSON lines on stdout by default, written asynchronously in blocks
 * (logDestination); the entry point flushes it before exiting.
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
        const line: Record<string, string> = ctx.user ? { reqId: ctx.requestId, user: ctx.user } : { reqId: ctx.requestId };
        if (ctx.traceId !== undefined) Object.assign(line, { trace_id: ctx.traceId, span_id: ctx.spanId });
        return line;
      },
    },
    destination ?? logDestination(1),
  );
}

/** What the request line says of a request (http/request-context.ts), beside its id and API user. */
export interface RequestLine {
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * The line logged for every request, at info, byte for byte as
 * `logger.info({ method, path, status, ms }, "request")` writes it inside the
 * request's context (test/logging.test.ts compares them), built here: its
 * fields are known and hold no header and no key, so pino's redaction (which
 * copies the paths it looks at) and its mixin's lookup of the context have
 * nothing to do, and cost a point read more than the rest of the line
 * (the history of bench/results.md). The caller checks that info is enabled.
 */
export function writeRequestLine(logger: Logger, ctx: RequestContext, line: RequestLine): void {
  const who =
    (ctx.user === undefined ? "" : `,"user":${JSON.stringify(ctx.user)}`) +
    (ctx.traceId === undefined ? "" : `,"trace_id":"${ctx.traceId}","span_id":"${ctx.spanId}"`);
  const own = logger as unknown as Record<symbol, unknown>;
  // A child logger's bindings (a cluster worker's `worker`), already serialized by pino, come after the time.
  const bindings = (own[pino.symbols.chindingsSym] as string | undefined) ?? "";
  (own[pino.symbols.streamSym] as DestinationStream).write(
    `{"level":30,"time":"${new Date().toISOString()}"${bindings},"reqId":${JSON.stringify(ctx.requestId)}${who},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
  );
}

/**
 * An asynchronous destination on a file descriptor, written in blocks
 * (LOG_BLOCK_BYTES, or every LOG_FLUSH_MS), that holds at most
 * `maxBufferBytes` of lines not yet taken (LOG_BUFFER_BYTES): beyond, lines
 * are dropped, and the first line written once there is room again is a
 * warning with their count (`droppedLines`). At exit (pino flushes
 * synchronously then) a destination that has held lines for a second without
 * taking any is left as it is, instead of waiting forever on a pipe nobody reads.
 */
export function logDestination(fd: number, maxBufferBytes = LOG_BUFFER_BYTES): ReturnType<typeof pino.destination> {
  // Lines held as Buffers, joined once per block: held as text, each line appended made sonic-boom copy
  // the whole block held so far (to count its bytes), about 2 KB of garbage a request line.
  const sonic = pino.destination({
    dest: fd,
    sync: false,
    minLength: LOG_BLOCK_BYTES,
    maxWrite: 4 * LOG_BLOCK_BYTES,
    maxLength: maxBufferBytes,
    contentMode: "buffer",
  });
  const holding = () => (sonic as unknown as { _len: number })._len > 0;
  const flushing = setInterval(() => {
    if (holding()) sonic.flush();
  }, LOG_FLUSH_MS).unref();
  sonic.once("close", () => clearInterval(flushing));
  let dropped = 0;
  let noticing = false;
  // When stdout last took lines, or when lines began to wait for it: an idle destination is not a stuck one.
  let lastTaken = Date.now();
  sonic.on("drop", () => {
    if (!noticing) dropped++;
  });
  sonic.on("write", () => (lastTaken = Date.now()));
  const write = sonic.write.bind(sonic) as unknown as (chunk: Buffer) => boolean;
  const flushSync = sonic.flushSync.bind(sonic);
  sonic.flushSync = () => {
    if (holding() && Date.now() - lastTaken > STUCK_MS) return;
    flushSync();
  };
  sonic.write = (line: string) => {
    if (!holding()) lastTaken = Date.now();
    if (dropped > 0) {
      noticing = true;
      let refused = false;
      const onDrop = () => (refused = true);
      sonic.once("drop", onDrop);
      write(
        Buffer.from(
          `${JSON.stringify({ level: 40, time: new Date().toISOString(), droppedLines: dropped, msg: "log lines dropped: stdout was not taking them and the log buffer was full" })}\n`,
        ),
      );
      sonic.off("drop", onDrop);
      noticing = false;
      if (!refused) dropped = 0;
    }
    return write(Buffer.from(line));
  };
  return sonic;
}
