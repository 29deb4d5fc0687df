import { randomUUID } from "node:crypto";
import { createServer, maxHeaderSize, STATUS_CODES, type RequestListener, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Config } from "../config.js";
import { errors, type ApiError } from "../errors.js";

/**
 * The HTTP server of the API, with the configured timeouts, and the failures
 * Node answers before Express sees a request (a request line that is not
 * HTTP, headers too large, headers or body too slow) answered in the API's
 * error shape too, instead of Node's empty 400/408/431.
 */
export function createHttpServer(app: RequestListener, config: Config): Server {
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
  server.on("clientError", answerClientError);
  return server;
}

function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A client that is gone, or one whose connection is half-way through another answer (a bad request
  // pipelined after a good one), is owed nothing: a status line must not land inside that answer.
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const apiError = clientErrorOf(error.code);
  const body = JSON.stringify(apiError.toBody());
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "X-Content-Type-Options: nosniff\r\n" +
      // Every answer carries a request id (here one of its own: there is no request to take it from).
      `X-Request-Id: ${randomUUID()}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
  // Closed once written, rather than left half-open until the client goes.
  (socket as Duplex & { destroySoon?: () => void }).destroySoon?.();
}

function clientErrorOf(code: string | undefined): ApiError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return errors.headersTooLarge(maxHeaderSize);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return errors.malformedRequest("Malformed HTTP request: chunk extensions too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return errors.requestTimeout();
    default:
      return errors.malformedRequest();
  }
}
