package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WebhookVerifierTest {
  // Signed by the TypeScript library the service uses (standardwebhooks 1.1.1):
  // new Webhook(SECRET).sign(ID, new Date(TIMESTAMP * 1000), BODY)
  private static final String SECRET = "whsec_YSB0ZXN0IHNlY3JldCBvZiB0aGlydHktdHdvIGJ5dGU=";
  private static final String ID = "msg_0123456789abcdef0123456789abcdef";
  private static final long TIMESTAMP = 1795464000L;
  private static final String BODY =
      "{\"type\":\"reward_log.created\",\"timestamp\":\"2026-11-23T20:00:00.000Z\",\"data\":{\"id\":7,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-23T20:00:00Z\"}}";
  private static final String SIGNATURE = "v1,VH7RuB0rLaVq+c6XDVfFY45w5gpBcqVQ4vl93t2rG4s=";

  private static WebhookVerifier at(long epochSeconds) {
    return new WebhookVerifier(SECRET, WebhookVerifier.DEFAULT_TOLERANCE, Clock.fixed(Instant.ofEpochSecond(epochSeconds), ZoneOffset.UTC));
  }

  private static Map<String, String> headers(String id, String timestamp, String signature) {
    return Map.of("Webhook-Id", id, "webhook-timestamp", timestamp, "WEBHOOK-SIGNATURE", signature);
  }

  @Test
  void whenTheServiceSignedTheMessage_thenItVerifies_withHeadersInAnyCase() {
    assertDoesNotThrow(() -> at(TIMESTAMP + 10).verify(headers(ID, String.valueOf(TIMESTAMP), SIGNATURE), BODY));
    assertEquals(SIGNATURE, at(TIMESTAMP).signature(ID, TIMESTAMP, BODY.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void whenHeadersComeWithListsOfValues_thenSingleValuedGivesWhatVerifyTakes_keepingEverySignature() {
    Map<String, List<String>> received = Map.of(
        "Webhook-id", List.of(ID), "Webhook-timestamp", List.of(String.valueOf(TIMESTAMP)),
        "Webhook-signature", List.of("v1,bm90LXRoaXMtb25l", SIGNATURE), "Content-type", List.of("application/json"));
    assertDoesNotThrow(() -> at(TIMESTAMP).verify(WebhookVerifier.singleValued(received), BODY));
    assertEquals("v1,bm90LXRoaXMtb25l " + SIGNATURE, WebhookVerifier.singleValued(received).get("Webhook-signature"));
  }

  @Test
  void whenOneOfSeveralSignaturesIsValid_thenItVerifies() {
    String several = "v1,AAAA v1a,whatever " + SIGNATURE;
    assertDoesNotThrow(() -> at(TIMESTAMP).verify(headers(ID, String.valueOf(TIMESTAMP), several), BODY));
  }

  @Test
  void whenTheBodyTheIdTheTimestampOrTheSecretDiffer_thenItIsRefused() {
    String ts = String.valueOf(TIMESTAMP);
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, ts, SIGNATURE), BODY.replace("42", "43")));
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers("msg_other", ts, SIGNATURE), BODY));
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, String.valueOf(TIMESTAMP + 1), SIGNATURE), BODY));
    WebhookVerifier other = new WebhookVerifier("whsec_b3RoZXIgc2VjcmV0", Duration.ofMinutes(5), Clock.fixed(Instant.ofEpochSecond(TIMESTAMP), ZoneOffset.UTC));
    assertThrows(WebhookVerifier.VerificationException.class, () -> other.verify(headers(ID, ts, SIGNATURE), BODY));
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, ts, "v1,not-base64!"), BODY));
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(Map.of("webhook-id", ID), BODY));
  }

  @Test
  void whenTheTimestampIsOutsideTheTolerance_thenItIsRefused_evenWithAValidSignature() {
    String ts = String.valueOf(TIMESTAMP);
    WebhookVerifier.VerificationException late =
        assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP + 301).verify(headers(ID, ts, SIGNATURE), BODY));
    assertEquals("webhook-timestamp is too old", late.getMessage());
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP - 301).verify(headers(ID, ts, SIGNATURE), BODY));
    assertDoesNotThrow(() -> at(TIMESTAMP + 299).verify(headers(ID, ts, SIGNATURE), BODY));
    assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, "soon", SIGNATURE), BODY));
  }

  @Test
  void whenTheTimestampIsBeyondWhatAnInstantHolds_thenItIsRefused_notADateTimeException() {
    WebhookVerifier.VerificationException future =
        assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, "99999999999999999", SIGNATURE), BODY));
    assertEquals("webhook-timestamp is too far in the future", future.getMessage());
    WebhookVerifier.VerificationException past =
        assertThrows(WebhookVerifier.VerificationException.class, () -> at(TIMESTAMP).verify(headers(ID, "-99999999999999999", SIGNATURE), BODY));
    assertEquals("webhook-timestamp is too old", past.getMessage());
  }

  @Test
  void whenPrinted_thenTheSecretIsNotShown() {
    assertFalse(at(TIMESTAMP).toString().contains("YSB0"));
  }
}
