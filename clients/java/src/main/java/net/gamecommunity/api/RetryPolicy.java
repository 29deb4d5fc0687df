package net.gamecommunity.api;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When and how long to wait before sending a request again. A request is retried after a timeout, a
 * connection failure, a 429, a 503, or a proxy's 502 or 504 (never after another status: a 500 is the
 * service's own failure, which a retry repeats), at most {@code maxAttempts} times in
 * all: after {@code Retry-After} when the service gives one no longer than {@code maxRetryAfter}
 * (a longer one ends the call with that answer, for the caller to decide), else after a random
 * delay of up to {@code baseDelay} × 2<sup>n</sup>, capped at {@code maxDelay} ("full jitter").
 * GETs and POSTs (which carry an Idempotency-Key) follow it; PATCHes only when the caller asks.
 *
 * @param maxAttempts attempts in all, the first included (1: never retry)
 * @param baseDelay the first retry's longest random wait, doubling with each retry
 * @param maxDelay the longest random wait
 * @param maxRetryAfter the longest Retry-After waited for; a longer one ends the call with its answer
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay, Duration maxRetryAfter) {

  /** 4 attempts; waits up to 250 ms × 2<sup>n</sup>, at most 5 s; a Retry-After up to 10 s. */
  public static final RetryPolicy DEFAULT = new RetryPolicy(4, Duration.ofMillis(250), Duration.ofSeconds(5), Duration.ofSeconds(10));
  /** One attempt: never retry. */
  public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ZERO);

  /**
   * Checks the values: at least 1 attempt, no negative delay.
   *
   * @param maxAttempts attempts in all, at least 1
   * @param baseDelay the first retry's longest random wait
   * @param maxDelay the longest random wait
   * @param maxRetryAfter the longest Retry-After waited for
   */
  public RetryPolicy {
    if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts: expected 1 or more");
    if (baseDelay.isNegative() || maxDelay.isNegative() || maxRetryAfter.isNegative()) throw new IllegalArgumentException("delays: expected 0 or more");
  }

  /** The wait before attempt {@code attempt + 1} (attempts count from 1), or null to give up. */
  Duration delayAfter(int attempt, Duration retryAfter) {
    if (attempt >= maxAttempts) return null;
    if (retryAfter != null) return retryAfter.compareTo(maxRetryAfter) <= 0 ? retryAfter : null;
    long cap = Math.min(maxDelay.toMillis(), baseDelay.toMillis() << Math.min(attempt - 1, 20));
    return Duration.ofMillis(cap <= 0 ? 0 : ThreadLocalRandom.current().nextLong(cap + 1));
  }

  /** The statuses a retryable call is sent again after: 429 and the 5xx that mean "not now" (a proxy's 502 and 504, the service's 503). */
  static boolean retried(int status) {
    return status == 429 || status == 502 || status == 503 || status == 504;
  }

  /** Retry-After as seconds or as an HTTP date (RFC 9110); absent or unreadable gives null. */
  static Duration retryAfter(HttpResponse<?> response) {
    Optional<String> value = response.headers().firstValue(Headers.RETRY_AFTER).map(String::trim);
    if (value.isEmpty()) return null;
    try {
      return Duration.ofSeconds(Math.max(0, Long.parseLong(value.get())));
    } catch (NumberFormatException notSeconds) {
      try {
        Duration until = Duration.between(Instant.now(), ZonedDateTime.parse(value.get(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        return until.isNegative() ? Duration.ZERO : until;
      } catch (DateTimeParseException notDate) {
        return null;
      }
    }
  }
}
