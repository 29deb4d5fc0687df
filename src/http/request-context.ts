import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import { maskKeys } from "../auth/api-keys.js";
import { requestContext } from "../context.js";
import type { Logger } from "../logger.js";

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's own X-Request-Id when sane, a new one otherwise. */
export function requestIdOf(offered: string | string[] | undefined): string {
  // An id holding anything shaped like an API key is refused: it would be written on every log
  // line, in the audit log and back in the response.
  return typeof offered === "string" && SANE_REQUEST_ID.test(offered) && maskKeys(offered) === offered ? offered : randomUUID();
}

/**
 * Gives the request its id (the client's own when sane), runs the rest of the
 * chain inside the request context, and writes one log line per request when
 * it finishes: method, path, status, duration, API user. Never headers.
 */
export function requestLifecycle(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdOf(req.headers["x-request-id"]);
    res.setHeader("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    const ctx = { requestId } as { requestId: string; user?: string };
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      requestContext.run(ctx, () => {
        logger.info(
          // A key pasted into the path (a client's mistake) must not land in the log.
          { method: req.method, path: maskKeys(req.originalUrl.split("?")[0] ?? ""), status: res.statusCode, ms: Math.round(ms * 10) / 10 },
          "request",
        );
      });
    });
    requestContext.run(ctx, next);
  };
}
