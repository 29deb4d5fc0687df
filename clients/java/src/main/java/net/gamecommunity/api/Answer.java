package net.gamecommunity.api;

import java.net.URI;
import java.net.http.HttpResponse;

/**
 * One answer of a route, decoded: its body (null for a 304) and the headers a caller or a helper may
 * need (syncToken and link on lists only). {@link #decode} turns a response into one, or into the
 * {@link ApiException} an error status or an unreadable body means ({@link Failures#error}).
 *
 * @param <T> the body's type, the route's
 * @param status the HTTP status
 * @param body the decoded body; null for a 304
 * @param etag the ETag, or null
 * @param replayed whether the service answered a resent Idempotency-Key from what it recorded
 * @param syncToken the Sync-Token of a list, or null
 * @param link the Link header of a list (its next page), or null
 * @param uri where the request went
 */
record Answer<T>(int status, T body, String etag, boolean replayed, String syncToken, String link, URI uri) {
  boolean notModified() {
    return status == 304;
  }

  /**
   * The answer {@code response} gives to a request of {@code route}.
   *
   * @throws ApiException for a status other than 2xx and 304, or a body this client cannot read
   */
  static Answer<?> decode(Route route, HttpResponse<String> response, boolean strictDecoding) {
    int status = response.statusCode();
    String requestId = response.headers().firstValue(Headers.REQUEST_ID).orElse(null);
    String etag = response.headers().firstValue(Headers.ETAG).orElse(null);
    if (status == 304) return new Answer<>(status, null, etag, false, null, null, response.uri());
    if (status < 200 || status > 299) throw Failures.error(route, response, requestId);
    try {
      Object body = StrictJson.decode(response.body(), route.response, strictDecoding);
      boolean replayed = response.headers().firstValue(Headers.IDEMPOTENT_REPLAYED).map("true"::equalsIgnoreCase).orElse(false);
      String syncToken = response.headers().firstValue(Headers.SYNC_TOKEN).orElse(null);
      String link = response.headers().firstValue(Headers.LINK).orElse(null);
      return new Answer<>(status, body, etag, replayed, syncToken, link, response.uri());
    } catch (StrictJson.DecodingException e) {
      throw new ApiException(ApiException.Kind.INVALID_RESPONSE, status,
          route.method + " " + route.path + " answered a body this client cannot read: " + e.getMessage(), requestId, null, null, e);
    }
  }
}
