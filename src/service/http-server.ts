import { createServer, type IncomingMessage, maxHeaderSize, type RequestListener, type Server, ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { maskKeys } from "../core/api-keys.js";
import type { Config } from "../core/config.js";
import { type ApiError, ERROR_NAME_HEADER, errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { UNAVAILABLE_RETRY_AFTER_S } from "../http/error-handler.js";
import { requestIdOf } from "../http/request-context.js";
import { JSON_HEADERS } from "../http/security-headers.js";

/**
 * The HTTP server of the API, with the configured timeouts, and the failures
 * Node answers before Express sees a request (a request line that is not
 * HTTP, headers too large, headers or body too slow) answered in the API's
 * error shape too, instead of Node's empty 400/408/431; so is CONNECT, which
 * Node would answer by closing the connection. A client that stops taking its
 * answer is cut off after SEND_TIMEOUT_MS.
 */
export function createHttpServer(app: RequestListener, config: Config, logger: Logger): Server {
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
    },
    app,
  );
  // The client's address read at connection: Node asks the socket for it only when first read, and once a
  // client has reset its connection there is none left to ask, so a request it sent and hung up on would
  // have no req.ip (its failed authentication counted under no address, its audit entry without one).
  server.on("connection", (socket: Socket) => {
    void socket.remoteAddress;
    lastConnection.set(server, Date.now());
  });
  server.on("clientError", answerClientError);
  server.on("connect", answerConnect(app));
  server.setTimeout(config.sendTimeoutMs, (socket: Socket) => onInactive(socket, config.sendTimeoutMs, logger));
  return server;
}

const lastConnection = new WeakMap<Server, number>();
/** When the server last accepted a connection (a stopping instance waits for a quiet moment to close its listener). */
export const lastConnectionAt = (server: Server): number => lastConnection.get(server) ?? 0;

/**
 * What a request gets while the instance has its port but not yet its app (the database opening, the
 * migrations running): 503 STARTING with Retry-After, in the error shape, and the connection closed,
 * so that a load balancer's next attempt goes to a fresh connection. No body is read: nothing is done.
 */
export function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const error = errors.starting();
  const body = JSON.stringify(error.toBody());
  res.shouldKeepAlive = false;
  res.writeHead(
    error.status,
    [
      ["X-Request-Id", requestIdOf(req.headers["x-request-id"])],
      ["Retry-After", String(UNAVAILABLE_RETRY_AFTER_S)],
      ["Cache-Control", "no-store"],
      [ERROR_NAME_HEADER, error.kind],
      ...JSON_HEADERS,
      ["Content-Type", "application/json; charset=utf-8"],
      ["Content-Length", String(Buffer.byteLength(body))],
    ].flat(),
  );
  res.end(body);
}

interface Answer {
  headersSent: boolean;
  /** Express keeps the URL as received in originalUrl, and rewrites url while routing. */
  req?: { method?: string; url?: string; originalUrl?: string };
  getHeader(name: string): unknown;
}

/**
 * Node's socket inactivity timer (re-armed by Node on every read and write: no timer of ours per request)
 * fires when nothing moved on the connection for SEND_TIMEOUT_MS. With answer bytes waiting, the client
 * stopped reading while its answer holds memory (and maybe a full list's slot): it is cut off. A request
 * still being worked on, or an answer with nothing waiting, waits on us, not the client: left alone.
 * Between requests the same timer is Node's keep-alive timeout.
 */
function onInactive(socket: Socket, sendTimeoutMs: number, logger: Logger): void {
  const answer = (socket as Socket & { _httpMessage?: Answer | null })._httpMessage;
  if (answer && (!answer.headersSent || socket.writableLength === 0)) return;
  if (answer) {
    logger.warn(
      {
        reqId: answer.getHeader("x-request-id"),
        method: answer.req?.method,
        path: maskKeys((answer.req?.originalUrl ?? answer.req?.url ?? "").split("?")[0] ?? ""),
        heldBytes: socket.writableLength,
        sendTimeoutMs,
      },
      "client took none of its answer within SEND_TIMEOUT_MS: connection cut",
    );
  }
  socket.destroy();
}

function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A client that is gone, or one whose connection is half-way through another answer (a bad request
  // pipelined after a good one), is owed nothing: a status line must not land inside that answer.
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  // Every answer carries a request id (here one of its own: there is no request to read one from).
  answerAndClose(socket, clientErrorOf(error.code), [["X-Request-Id", requestIdOf(undefined)]]);
}

/**
 * CONNECT asks to open a tunnel, as through a proxy, which this server is not.
 * On a path (`CONNECT /api/…`) it goes to the app like any other method, and
 * gets what any other would (401, 404 or 405 with the path's Allow); to a
 * `host:port`, which Express cannot route, 405 allowing nothing. Either way the
 * connection closes once answered: nothing is tunnelled.
 */
function answerConnect(app: RequestListener) {
  return (req: IncomingMessage, socket: Duplex) => {
    // Node took its own listeners off the socket when it handed it over.
    socket.on("error", () => socket.destroy());
    if (!req.url?.startsWith("/")) {
      answerAndClose(socket, errors.methodNotAllowed("CONNECT", req.url ?? ""), [
        ["X-Request-Id", requestIdOf(req.headers["x-request-id"])],
        ["Allow", ""],
      ]);
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once("finish", () => {
      res.detachSocket(socket as Socket);
      (socket as Socket).destroySoon();
    });
    app(req, res);
  };
}

/** An answer written on the connection itself, in the error shape, with the headers every answer has. */
function answerAndClose(socket: Duplex, apiError: ApiError, headers: readonly (readonly [string, string])[] = []): void {
  const body = JSON.stringify(apiError.toBody());
  const head = [
    ...headers,
    [ERROR_NAME_HEADER, apiError.kind],
    ...JSON_HEADERS,
    ["Content-Type", "application/json; charset=utf-8"],
    ["Content-Length", String(Buffer.byteLength(body))],
    ["Connection", "close"],
  ];
  socket.end(`HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n${head.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n${body}`);
  // Closed once written, rather than left half-open until the client goes.
  (socket as Duplex & { destroySoon?: () => void }).destroySoon?.();
}

function clientErrorOf(code: string | undefined): ApiError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return errors.headersTooLarge(maxHeaderSize);
    case "HPE_INVALID_URL":
      return errors.malformedRequest(
        "Malformed HTTP request: the request target must be a path such as /api/... in printable ASCII (percent-encode anything else as UTF-8)",
      );
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return errors.malformedRequest("Malformed HTTP request: chunk extensions too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return errors.requestTimeout();
    default:
      return errors.malformedRequest();
  }
}
