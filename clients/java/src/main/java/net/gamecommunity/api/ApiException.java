package net.gamecommunity.api;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Every failure of a call: an error answer of the service ({@link #status()} &gt; 0, with its message
 * and request id), no answer at all ({@link Kind#NETWORK}), or an answer this client cannot read
 * ({@link Kind#INVALID_RESPONSE}). Quote {@link #requestId()} when reporting a problem.
 */
public final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public enum Kind {
    /** 400: a parameter or field is missing or invalid; the message names it. Do not retry unchanged. */
    BAD_REQUEST(400),
    /** 401: the API key is missing, unknown or revoked. */
    UNAUTHENTICATED(401),
    /** 403: this API user may not call this route (or not from this address). */
    FORBIDDEN(403),
    /** 404: the record does not exist (a route the service does not have is {@link #OTHER_STATUS}: a wrong base URL). */
    NOT_FOUND(404),
    /** 409: the write conflicts with existing data (a duplicate name, a reward already recorded, a player that does not exist). */
    CONFLICT(409),
    /** 412: the record changed since the ETag given to If-Match; nothing was written. Read it again. */
    PRECONDITION_FAILED(412),
    /** 429: too many requests; wait {@link #retryAfter()}. */
    RATE_LIMITED(429),
    /** 503: the service's database is unavailable; nothing was written. Retry later. */
    UNAVAILABLE(503),
    /** Any other error status (405, 408, 413, 415, 422, 431, 500…): see {@link #status()}. */
    OTHER_STATUS(-1),
    /** No answer: connection refused or lost, or the request timed out. */
    NETWORK(0),
    /** An answer that is not what the API documents (a field missing, unknown or of the wrong type). */
    INVALID_RESPONSE(-1),
    /** Not the API's doing: the client was closed, or a callback of the caller threw (see the cause). */
    UNEXPECTED(-1);

    private final int status;

    Kind(int status) {
      this.status = status;
    }

    static Kind of(int status) {
      for (Kind kind : values()) if (kind.status == status && status > 0) return kind;
      return OTHER_STATUS;
    }
  }

  private final Kind kind;
  private final int status;
  private final String requestId;
  private final Duration retryAfter;

  ApiException(Kind kind, int status, String message, String requestId, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.status = status;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }

  public Kind kind() {
    return kind;
  }

  /** The HTTP status (the error body's {@code code}), or 0 when no answer came. */
  public int status() {
    return status;
  }

  /** The service's X-Request-Id of the failed request, when an answer came. */
  public Optional<String> requestId() {
    return Optional.ofNullable(requestId);
  }

  /** How long the service asked to wait (Retry-After, on 429 and 503). */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** The same failure, its stack trace the calling thread's (what {@code blocking()} throws). */
  ApiException inCallersThread() {
    return new ApiException(kind, status, getMessage(), requestId, retryAfter, getCause());
  }

  /**
   * The ApiException behind what a future failed with ({@link CompletionException} and
   * {@link ExecutionException} unwrapped). Any other failure, such as an exception thrown by one of
   * your own callbacks, comes back as {@link Kind#UNEXPECTED} with it as the cause, so that logging
   * the result shows it rather than losing it.
   */
  public static ApiException unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) t = t.getCause();
    if (t instanceof ApiException e) return e;
    return new ApiException(Kind.UNEXPECTED, 0, String.valueOf(t), null, null, t);
  }

  @Override
  public String toString() {
    return "ApiException[" + kind + (status > 0 ? " " + status : "") + (requestId != null ? ", request " + requestId : "") + "]: " + getMessage();
  }
}
