import { randomUUID } from "node:crypto";
import { context, TraceFlags } from "@opentelemetry/api";
import type { Request, RequestHandler, Response } from "express";
import { maskKeys } from "../core/api-keys.js";
import { type RequestContext, requestContext } from "../core/context.js";
import { type Logger, writeRequestLine } from "../core/logger.js";
import { endRequestSpan, startRequestSpan, tracing } from "../core/tracing.js";
import { JSON_HEADERS } from "./security-headers.js";

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's own X-Request-Id when sane, a new one otherwise. */
export function requestIdOf(offered: string | string[] | undefined): string {
  // An id holding anything shaped like an API key is refused: it would be written on every log
  // line, in the audit log and back in the response.
  return typeof offered === "string" && SANE_REQUEST_ID.test(offered) && maskKeys(offered) === offered ? offered : randomUUID();
}

/** Told when a request's answer has been handed to the connection, with the time it took and its trace if sampled. */
export type OnFinished = (req: Request, res: Response, seconds: number, traceId: string | undefined) => void;

/**
 * What every request gets, in one step (each middleware layer costs Express
 * a turn of its router): its id (the client's own when sane), the security
 * headers of a JSON API, the rest of the chain run inside the request
 * context, and once the answer is sent one log line (method, path, status,
 * duration, API user; never headers) and `onFinished` (the metrics).
 * With neither (log level above info, no metrics served) nothing waits for
 * the answer: a point read's "finish" listener and clock cost ~3 µs.
 */
export function requestLifecycle(logger: Logger, onFinished?: OnFinished): RequestHandler {
  // The level is set once, at start: the line is built only when it is written.
  const logLines = logger.isLevelEnabled("info");
  const timed = logLines || onFinished !== undefined;
  return (req, res, next) => {
    const started = timed ? process.hrtime.bigint() : 0n;
    const requestId = requestIdOf(req.headers["x-request-id"]);
    res.setHeader("X-Request-Id", requestId);
    for (const [name, value] of JSON_HEADERS) res.setHeader(name, value);
    const ctx: RequestContext = { requestId };
    // Tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): the request's span, its ids on the log line (core/tracing.ts).
    const traced = tracing.on ? startRequestSpan(req.method, req.headers) : undefined;
    let sampledTrace: string | undefined;
    if (traced) {
      const ids = traced.span.spanContext();
      ctx.traceId = ids.traceId;
      ctx.spanId = ids.spanId;
      if (ids.traceFlags & TraceFlags.SAMPLED) sampledTrace = ids.traceId;
      res.on("close", () => endRequestSpan(traced.span, req.method, (res.locals as { route?: string }).route, res.statusCode));
    }
    if (timed) {
      res.on("finish", () => {
        const ns = Number(process.hrtime.bigint() - started);
        onFinished?.(req, res, ns / 1e9, sampledTrace);
        if (logLines) {
          // A key pasted into the path (a client's mistake) must not land in the log.
          const path = maskKeys(req.originalUrl.split("?")[0] ?? "");
          writeRequestLine(logger, ctx, { method: req.method, path, status: res.statusCode, ms: Math.round(ns / 1e5) / 10 });
        }
      });
    }
    if (traced) context.with(traced.context, () => requestContext.run(ctx, next));
    else requestContext.run(ctx, next);
  };
}
