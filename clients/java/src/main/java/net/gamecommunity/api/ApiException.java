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

  /** What kind of failure a call met: an error status of the service, or a failure of no status. */
  public enum Kind {
    /** 400: a parameter or field is missing or invalid; the message names it. Do not retry unchanged. */
    BAD_REQUEST(400),
    /** 401: the API key is missing, unknown or revoked. */
    UNAUTHENTICATED(401),
    /** 403: this API user may not call this route (or not from this address). */
    FORBIDDEN(403),
    /** 404: the record does not exist (a route the service does not have is {@link #OTHER_STATUS}: a wrong base URL). */
    NOT_FOUND(404),
    /**
     * 409: the write conflicts with existing data. {@link ApiException#error()} tells which way:
     * {@code DUPLICATE} (a name taken, a reward already recorded), {@code REFERENCE_NOT_FOUND} (a
     * record it names, such as the player, does not exist) or {@code CONFLICT} (the record's state
     * forbids it).
     */
    CONFLICT(409),
    /** 410: what the request names is gone for good, e.g. a list's sync token (the list must be read whole again). */
    GONE(410),
    /** 412: the record changed since the ETag given to If-Match; nothing was written. Read it again. */
    PRECONDITION_FAILED(412),
    /** 422: the request is well-formed but cannot be processed, e.g. an Idempotency-Key reused with another body. */
    UNPROCESSABLE(422),
    /** 429: too many requests; wait {@link #retryAfter()}. */
    RATE_LIMITED(429),
    /** 503: the service's database is unavailable; nothing was written. Retry later. */
    UNAVAILABLE(503),
    /**
     * Another 5xx (500, 502, 504…): the service or a proxy in front of it failed. 502 and 504 are
     * retried like 503; a write may have been recorded all the same (a proxy's 504 after the service
     * answered): resend it with the same Idempotency-Key, never a new one.
     */
    SERVER_ERROR(-1),
    /** Any other error status (405, 408, 413, 415, 431…): see {@link #status()}. */
    OTHER_STATUS(-1),
    /** No answer: connection refused or lost, or the request timed out; the message names the host and port. */
    NETWORK(0),
    /** An answer that is not what the API documents (a field missing, unknown or of the wrong type). */
    INVALID_RESPONSE(-1),
    /**
     * The client was closed before the call got its answer (or the call was made after), and the service
     * cannot have recorded it: a read, or a write never sent. Nothing more will come of it. (A
     * {@link DurableWrites} write fails with it when its queue closes first: it stays saved and is sent
     * again at the next open.)
     */
    CLOSED(-1),
    /**
     * The client was closed while a write was on its way: the service may have recorded it or not. Send it
     * again with the same Idempotency-Key (pass your own key to the call, or use {@link DurableWrites}):
     * the service records it once.
     */
    OUTCOME_UNKNOWN(-1),
    /** The caller passed an invalid argument (a {@code null}, say): the message names it; nothing was sent. */
    INVALID_ARGUMENT(-1),
    /** Not the API's doing: a callback of the caller threw, or an executor refused work (see the cause). */
    UNEXPECTED(-1);

    private final int status;

    Kind(int status) {
      this.status = status;
    }

    static Kind of(int status) {
      for (Kind kind : values()) if (kind.status == status && status > 0) return kind;
      return status >= 500 && status <= 599 ? SERVER_ERROR : OTHER_STATUS;
    }
  }

  /** What kind of failure this is. */
  private final Kind kind;
  /** The HTTP status, 0 without an answer. */
  private final int status;
  /** The service's X-Request-Id, or null. */
  private final String requestId;
  /** The service's Retry-After, or null. */
  private final Duration retryAfter;
  /** The service's Error-Name, or null. */
  private final String error;

  ApiException(Kind kind, int status, String message, String requestId, Duration retryAfter, String error, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.status = status;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
    this.error = error;
  }

  /**
   * A failure as the client would report it, for a fake {@link CommunityApi} in a plugin's tests to fail
   * its futures with.
   *
   * <pre>{@code
   * CompletableFuture.failedFuture(ApiException.of(ApiException.Kind.NOT_FOUND, 404, "no player has that nick"))
   * }</pre>
   *
   * @param kind the kind
   * @param status the HTTP status, 0 for a failure without an answer
   * @param message the message
   * @return the failure
   */
  public static ApiException of(Kind kind, int status, String message) {
    return new ApiException(java.util.Objects.requireNonNull(kind, "kind"), status, message, null, null, null, null);
  }

  /** @return what kind of failure this is: the first thing to look at */
  public Kind kind() {
    return kind;
  }

  /** @return the HTTP status (the error body's {@code code}), or 0 when no answer came */
  public int status() {
    return status;
  }

  /** @return the service's X-Request-Id of the failed request, when an answer came: quote it when reporting a problem */
  public Optional<String> requestId() {
    return Optional.ofNullable(requestId);
  }

  /** @return how long the service asked to wait (Retry-After, on 429 and 503) */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /**
   * The service's name for this error (its {@code Error-Name} header), finer than the status: e.g.
   * {@code DUPLICATE} or {@code REFERENCE_NOT_FOUND} for a 409, {@code VALIDATION} for a 400. The names
   * are listed in the API's error catalogue (docs/API.md); new ones may be added. Empty when no answer
   * came, or from a service older than the header.
   *
   * @return the error's name, such as {@code DUPLICATE}
   */
  public Optional<String> error() {
    return Optional.ofNullable(error);
  }

  /**
   * {@link #error()} as a constant, to switch on: {@link ErrorName#UNKNOWN} when there is none, or a newer
   * service's name this client does not know.
   *
   * @return the error's name
   */
  public ErrorName errorName() {
    return ErrorName.of(error);
  }

  /** The same failure, its stack trace the calling thread's (what {@code blocking()} throws). */
  ApiException inCallersThread() {
    return new ApiException(kind, status, getMessage(), requestId, retryAfter, error, getCause());
  }

  /**
   * The ApiException behind what a future failed with ({@link CompletionException} and
   * {@link ExecutionException} unwrapped). Any other failure, such as an exception thrown by one of
   * your own callbacks, comes back as {@link Kind#UNEXPECTED} with it as the cause, so that logging
   * the result shows it rather than losing it.
   *
   * @param failure what a future failed with
   * @return the ApiException it is, or wraps
   */
  public static ApiException unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) t = t.getCause();
    if (t instanceof ApiException e) return e;
    return new ApiException(Kind.UNEXPECTED, 0, String.valueOf(t), null, null, null, t);
  }

  @Override
  public String toString() {
    return "ApiException[" + kind + (status > 0 ? " " + status : "") + (error != null ? " " + error : "") + (requestId != null ? ", request " + requestId : "") + "]: " + getMessage();
  }
}
