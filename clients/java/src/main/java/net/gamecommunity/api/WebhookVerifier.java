package net.gamecommunity.api;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies the webhooks the service sends (Standard Webhooks): the
 * {@code webhook-signature} header holds {@code v1,<base64 HMAC-SHA256>} of
 * {@code "<webhook-id>.<webhook-timestamp>.<body>"} under the endpoint's secret
 * ({@code whsec_…}, shown once by {@code webhook add}). Signatures are compared
 * in constant time, and a timestamp further than the tolerance (5 minutes by
 * default) from now is refused, so a captured request cannot be replayed
 * later. Verify the raw body exactly as received, before parsing it. A
 * verified message may still be a duplicate (delivery is at least once): drop
 * repeats by {@code webhook-id}.
 *
 * <pre>{@code
 * WebhookVerifier verifier = new WebhookVerifier(System.getenv("WEBHOOK_SECRET"));
 * verifier.verify(headers, body); // throws WebhookVerifier.VerificationException
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class WebhookVerifier {
  /** How far the webhook-timestamp may be from now, by default. */
  public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

  private static final String PREFIX = "whsec_";
  private final byte[] key;
  private final Duration tolerance;
  private final Clock clock;

  /** A signature or timestamp that does not hold: answer the request 400 (or 401) and do not act on it. */
  public static final class VerificationException extends Exception {
    private static final long serialVersionUID = 1L;

    VerificationException(String message) {
      super(message);
    }
  }

  /** @param secret the endpoint's secret, {@code whsec_<base64>} (or the base64 alone) */
  public WebhookVerifier(String secret) {
    this(secret, DEFAULT_TOLERANCE, Clock.systemUTC());
  }

  /**
   * @param secret the endpoint's secret, {@code whsec_<base64>} (or the base64 alone)
   * @param tolerance how far the webhook-timestamp may be from {@code clock}'s time, either way
   * @param clock the clock to check timestamps against (a fixed one in tests)
   */
  public WebhookVerifier(String secret, Duration tolerance, Clock clock) {
    Objects.requireNonNull(secret, "secret");
    String encoded = secret.startsWith(PREFIX) ? secret.substring(PREFIX.length()) : secret;
    try {
      this.key = Base64.getDecoder().decode(encoded);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("the secret is not whsec_ followed by base64", e);
    }
    if (key.length == 0) throw new IllegalArgumentException("the secret is empty");
    this.tolerance = Objects.requireNonNull(tolerance, "tolerance");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Verifies a request from its headers (names in any case) and its raw body.
   *
   * @param headers the request's headers, one value per name (see {@link #singleValued})
   * @param body the request's body, exactly as received
   * @throws VerificationException when the request is not the service's, or too old: answer 400 and ignore it
   */
  public void verify(Map<String, String> headers, byte[] body) throws VerificationException {
    verify(header(headers, "webhook-id"), header(headers, "webhook-timestamp"), header(headers, "webhook-signature"), body);
  }

  /**
   * The same, for a body received as text (UTF-8).
   *
   * @param headers the request's headers, one value per name
   * @param body the request's body, as text
   * @throws VerificationException when the request is not the service's, or too old
   */
  public void verify(Map<String, String> headers, String body) throws VerificationException {
    verify(headers, body.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Headers as servers hand them, a list of values per name (the JDK's {@code HttpExchange},
   * Jakarta's, Netty's once copied), as {@link #verify(Map, byte[])} takes them: the first value of
   * each name, or all of them joined by a space for webhook-signature (several signatures may come).
   *
   * @param headers the headers, a list of values per name
   * @return the headers, one value per name
   */
  public static Map<String, String> singleValued(Map<String, ? extends List<String>> headers) {
    Map<String, String> single = new java.util.HashMap<>();
    headers.forEach((name, values) -> {
      if (name == null || values == null || values.isEmpty()) return;
      single.put(name, name.equalsIgnoreCase("webhook-signature") ? String.join(" ", values) : values.get(0));
    });
    return single;
  }

  /**
   * Verifies the three header values and the raw body.
   *
   * @param id the webhook-id header: the same on every attempt of one delivery (drop repeats by it)
   * @param timestamp the webhook-timestamp header, seconds since 1970
   * @param signatures the webhook-signature header: one or more {@code v1,<base64>}, space-separated
   * @param body the request's body, exactly as received
   * @throws VerificationException when a header is missing, the timestamp is out of tolerance, or no signature is valid
   */
  public void verify(String id, String timestamp, String signatures, byte[] body) throws VerificationException {
    if (id == null || timestamp == null || signatures == null) throw new VerificationException("missing webhook-id, webhook-timestamp or webhook-signature");
    long seconds;
    try {
      seconds = Long.parseLong(timestamp.trim());
    } catch (NumberFormatException e) {
      throw new VerificationException("webhook-timestamp is not a number of seconds");
    }
    Instant at;
    try {
      at = Instant.ofEpochSecond(seconds);
    } catch (DateTimeException e) {
      // Beyond the years an Instant holds (±1e9): outside any tolerance.
      throw new VerificationException(seconds < 0 ? "webhook-timestamp is too old" : "webhook-timestamp is too far in the future");
    }
    Instant now = clock.instant();
    if (at.isBefore(now.minus(tolerance))) throw new VerificationException("webhook-timestamp is too old");
    if (at.isAfter(now.plus(tolerance))) throw new VerificationException("webhook-timestamp is too far in the future");
    byte[] expected = sign(id, seconds, body);
    // Several signatures may be sent (a secret being rotated), space-separated: one valid v1 suffices.
    for (String candidate : signatures.trim().split(" +")) {
      int comma = candidate.indexOf(',');
      if (comma < 0 || !candidate.substring(0, comma).equals("v1")) continue;
      byte[] given;
      try {
        given = Base64.getDecoder().decode(candidate.substring(comma + 1));
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (MessageDigest.isEqual(expected, given)) return;
    }
    throw new VerificationException("no valid signature");
  }

  /**
   * The v1 signature of a message (for tests of a receiver).
   *
   * @param id the webhook-id
   * @param timestampSeconds the webhook-timestamp
   * @param body the body
   * @return {@code v1,<base64>}, as the webhook-signature header carries it
   */
  public String signature(String id, long timestampSeconds, byte[] body) {
    return "v1," + Base64.getEncoder().encodeToString(sign(id, timestampSeconds, body));
  }

  private byte[] sign(String id, long timestampSeconds, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update((id + "." + timestampSeconds + ".").getBytes(StandardCharsets.UTF_8));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  private static String header(Map<String, String> headers, String name) {
    for (Map.Entry<String, String> e : headers.entrySet()) {
      if (e.getKey() != null && e.getKey().toLowerCase(Locale.ROOT).equals(name)) return e.getValue();
    }
    return null;
  }

  @Override
  public String toString() {
    return "WebhookVerifier[tolerance=" + tolerance + "]"; // never the secret
  }
}
