package net.gamecommunity.api;

import java.util.Locale;

/**
 * The service's name for an error (its {@code Error-Name} header, docs/API.md's error catalogue), finer than the
 * status: {@link ApiException#errorName()}. A name this version of the client does not know (a newer service's)
 * is {@link #UNKNOWN}: switch on it with a default branch. The service's tests check this list against its own.
 */
public enum ErrorName {
  /** 400: a field of the request is invalid (the message names it). */
  VALIDATION,
  /** 400: the request is not HTTP the service can read. */
  MALFORMED_REQUEST,
  /** 400: the body is not JSON. */
  MALFORMED_JSON,
  /** 401: the key is missing, wrong, revoked or expired. */
  UNAUTHENTICATED,
  /** 403: this API user may not call the route (or from this address, or see these event types). */
  FORBIDDEN,
  /** 404: no such record. */
  NOT_FOUND,
  /** 404: no such route (a client and a service of different versions?). */
  ROUTE_NOT_FOUND,
  /** 405: the route does not take this method. */
  METHOD_NOT_ALLOWED,
  /** 408: the request came too slowly. */
  REQUEST_TIMEOUT,
  /** 409: already there (a name taken, a reward at the moment you sent): a retried write needs nothing more. */
  DUPLICATE,
  /** 409: a record the request names does not exist. */
  REFERENCE_NOT_FOUND,
  /** 409: the record's state forbids the write. */
  CONFLICT,
  /** 409: a resent registration whose key is not kept. */
  SECRET_NOT_REPLAYED,
  /** 412: the record changed since the ETag sent in If-Match. */
  PRECONDITION_FAILED,
  /** 413: the body is too large. */
  PAYLOAD_TOO_LARGE,
  /** 415: the body is not JSON in UTF-8. */
  UNSUPPORTED_MEDIA_TYPE,
  /** 422: an Idempotency-Key reused with another request. */
  IDEMPOTENCY_KEY_REUSED,
  /** 429: the rate limit: wait Retry-After. */
  RATE_LIMITED,
  /** 429: too many event streams open for this API user. */
  TOO_MANY_STREAMS,
  /** 431: the headers are too large. */
  HEADERS_TOO_LARGE,
  /** 500: the service failed (quote the request id). */
  INTERNAL,
  /** 410: a list's sync token or cursor is no longer valid. */
  SYNC_TOKEN_EXPIRED,
  /** 410: the saved event id is past the retention, or from another database. */
  EVENT_ID_EXPIRED,
  /** 410: the player was erased (the message gives the receipt): drop what you keep of them, do not retry. */
  PLAYER_ERASED,
  /** 503: the database is unreachable: retry later. */
  DATABASE_UNAVAILABLE,
  /** 503: too many full lists in progress on that instance. */
  LISTS_BUSY,
  /** 503: the instance is starting. */
  STARTING,
  /** 503: the operator paused the writes; nothing was written. */
  WRITES_FROZEN,
  /** 503: the instance is shutting down. */
  SHUTTING_DOWN,
  /** A name this client does not know, or none (no answer came, or a service older than the header). */
  UNKNOWN;

  /**
   * @param name an {@code Error-Name}, or null
   * @return its constant, or {@link #UNKNOWN}
   */
  public static ErrorName of(@Nullable String name) {
    if (name == null || name.equals("UNKNOWN")) return UNKNOWN;
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException newer) {
      return UNKNOWN;
    }
  }
}
