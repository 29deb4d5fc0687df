package net.gamecommunity.api;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The API user's request budget as the service last reported it (RateLimit and RateLimit-Policy
 * headers), and the wait it imposes on the client's loops (pollers, syncs, durable writes) once spent.
 */
final class RateBudget {
  private static final Pattern REMAINING = Pattern.compile("(?:^|;)\\s*r\\s*=\\s*(\\d+)");
  private static final Pattern RESET = Pattern.compile("(?:^|;)\\s*t\\s*=\\s*(\\d+)");
  private static final Pattern QUOTA = Pattern.compile("(?:^|;)\\s*q\\s*=\\s*(\\d+)");

  private volatile RateLimit rateLimit;

  /** @return the budget last seen; empty before the first answer, or when the service does not limit rates */
  Optional<RateLimit> lastSeen() {
    return Optional.ofNullable(rateLimit);
  }

  /** Keeps the rate budget the service reported (RateLimit: {@code "user"; r=599; t=42}), if it did. */
  void note(HttpResponse<?> response) {
    Optional<String> header = response.headers().firstValue(Headers.RATE_LIMIT);
    if (header.isEmpty()) return;
    Matcher r = REMAINING.matcher(header.get());
    Matcher t = RESET.matcher(header.get());
    if (!r.find() || !t.find()) return;
    try {
      int limit = response.headers().firstValue(Headers.RATE_LIMIT_POLICY).map(QUOTA::matcher).filter(Matcher::find)
          .map(m -> Integer.parseInt(m.group(1))).orElse(-1);
      rateLimit = new RateLimit(Integer.parseInt(r.group(1)), limit, Instant.now().plusSeconds(Long.parseLong(t.group(1))));
    } catch (NumberFormatException outOfRange) {
      // a header this client cannot read is no budget
    }
  }

  /**
   * How long a loop (poller, sync) waits before its next request: {@code every}, or longer when the
   * last failure asked for it (Retry-After of a 429 or 503) or when the rate budget is spent until
   * its window ends.
   */
  Duration nextDelay(Duration every, Throwable failure) {
    Duration wait = every;
    if (failure != null) {
      ApiException e = ApiException.unwrap(failure);
      if (RetryPolicy.retried(e.status()) && e.retryAfter().isPresent() && e.retryAfter().get().compareTo(wait) > 0) {
        wait = e.retryAfter().get();
      }
    }
    RateLimit budget = rateLimit;
    if (budget != null && budget.remaining() == 0) {
      Duration untilReset = Duration.between(Instant.now(), budget.resetsAt());
      if (untilReset.compareTo(wait) > 0) wait = untilReset;
    }
    return wait;
  }
}
