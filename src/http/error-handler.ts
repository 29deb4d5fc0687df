import type { ErrorRequestHandler } from "express";
import { requestContext } from "../core/context.js";
import { ApiError, ERROR_NAME_HEADER, errors } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { recordFailure } from "../core/tracing.js";
import { isDatabaseUnavailable, isRecordNotFound, uniqueViolation } from "../db/prisma-errors.js";
import { frozenWrite } from "../db/service-state.js";
import { conflictMessage, generatedKeyCollision } from "../entities/constraints.js";
import { malformedJsonMessage } from "./json-position.js";

interface HttpError {
  type?: unknown;
  body?: unknown;
  status?: unknown;
  expose?: unknown;
  charset?: unknown;
  encoding?: unknown;
}

/** The Retry-After of a 503, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;
/** The Retry-After of a write refused while writes are frozen: a move's last backup and restore take a while. */
export const FROZEN_RETRY_AFTER_S = 10;

/** body-parser's failures, by their `type`, in the catalogue's terms. */
function fromBodyParser(error: HttpError): ApiError | undefined {
  switch (error.type) {
    case "entity.parse.failed":
      return errors.malformedJson(malformedJsonMessage(error.body));
    case "entity.too.large":
      return errors.payloadTooLarge();
    case "encoding.unsupported":
      return errors.unsupportedMediaType(`Unsupported content encoding "${String(error.encoding)}"`);
    case "charset.unsupported":
      return errors.unsupportedCharset(String(error.charset));
    case "request.aborted":
    case "request.size.invalid":
      return errors.validation("body: the request body was incomplete");
    default:
      // Any other client error it raises (a gzip body that does not inflate, say) is still the client's.
      if (error.expose === true && typeof error.status === "number" && error.status >= 400 && error.status < 500) {
        return errors.malformedJson("body: could not be decoded (check Content-Encoding)");
      }
      return undefined;
  }
}

/** Maps any failure to the catalogue. Unknown failures become a 500 naming the request id. */
function toApiError(error: unknown, requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  const parserError = typeof error === "object" && error !== null ? fromBodyParser(error) : undefined;
  if (parserError) return parserError;
  if (isRecordNotFound(error)) return errors.notFound("Record");
  const violation = uniqueViolation(error);
  // A generated id still taken after the retries (http/write.ts) is the service's failure, not a duplicate of the client's.
  if (violation && !generatedKeyCollision(error)) return errors.duplicate(conflictMessage(violation));
  if (isDatabaseUnavailable(error)) return errors.databaseUnavailable();
  const frozen = frozenWrite(error);
  if (frozen) return errors.writesFrozen(frozen.since, frozen.reason);
  return errors.internal(requestId, error);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const requestId = requestContext.getStore()?.requestId ?? "unknown";
    const apiError = toApiError(error, requestId);
    if (apiError.status === 503) {
      // Expected while the database is down or the instance stops: one warning line each, no stack.
      const cause = error instanceof Error ? error.message.split("\n").filter(Boolean).at(-1) : String(error);
      logger.warn({ status: 503, kind: apiError.kind, cause }, "request answered 503");
    } else if (apiError.status >= 500) {
      logger.error({ err: apiError.cause ?? error, status: apiError.status }, "request failed");
    }
    // On the request's span (tracing on): the exception, its type and message, and the span marked failed.
    if (apiError.status >= 500) recordFailure(apiError.cause ?? error);
    // Nothing was done, and the cause (a database restart, a burst) usually passes within seconds: a
    // client retries after this, backing off further on its own. A 503 that knows better (LISTS_BUSY) set its own.
    if (apiError.kind === "WRITES_FROZEN") res.setHeader("Retry-After", String(FROZEN_RETRY_AFTER_S));
    if (apiError.status === 503 && !res.hasHeader("Retry-After")) res.setHeader("Retry-After", String(UNAVAILABLE_RETRY_AFTER_S));
    res.setHeader(ERROR_NAME_HEADER, apiError.kind);
    res.status(apiError.status).json(apiError.toBody());
  };
}
