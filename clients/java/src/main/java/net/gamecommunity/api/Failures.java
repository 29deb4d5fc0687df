package net.gamecommunity.api;

import com.google.gson.JsonElement;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The {@link ApiException}s the request pipeline makes: from an error answer (a route's, or the event
 * stream's refusal), from no answer at all (a network failure), from a closed client, and from a failure
 * this client did not expect (a bug, or an executor that refused work).
 */
final class Failures {
  private Failures() {}

  static ApiException closed(Throwable cause) {
    return new ApiException(ApiException.Kind.CLOSED, 0, "this CommunityApi is closed", null, null, null, cause);
  }

  static ApiException unexpected(Throwable cause) {
    return new ApiException(ApiException.Kind.UNEXPECTED, 0, String.valueOf(cause), null, null, null, cause);
  }

  /** No answer to {@code request} after {@code attempts} attempts: timed out, the name did not resolve, or the connection failed. */
  static ApiException network(HttpRequest request, int attempts, Throwable cause) {
    return new ApiException(ApiException.Kind.NETWORK, 0, request.method() + " " + request.uri().getPath() + " to "
        + hostAndPort(request.uri()) + " " + why(cause, request.uri().getHost()) + " after " + attempts + " attempt(s)", null, null, null, cause);
  }

  /** What an operator can act on: the JDK says a refusal and a name that does not resolve with the same ConnectException. */
  private static String why(Throwable cause, String host) {
    if (cause instanceof HttpTimeoutException) return "timed out";
    for (Throwable c = cause; c != null; c = c.getCause()) {
      if (c instanceof java.nio.channels.UnresolvedAddressException || c instanceof java.net.UnknownHostException) {
        return "failed: the name " + host + " does not resolve (DNS: a typo in the URL, or no network)";
      }
    }
    if (cause instanceof java.net.ConnectException) return "failed: could not connect (refused: nothing listens there, or a firewall)";
    return "failed (" + cause + ")";
  }

  private static String hostAndPort(URI uri) {
    int port = uri.getPort() != -1 ? uri.getPort() : "https".equals(uri.getScheme()) ? 443 : 80;
    return uri.getHost() + ":" + port;
  }

  /** An error status of a route: its kind, the API's error body's message, its Error-Name, Request-Id and Retry-After. */
  static ApiException error(Route route, HttpResponse<String> response, String requestId) {
    int status = response.statusCode();
    String name = response.headers().firstValue(Headers.ERROR_NAME).map(String::trim).filter(s -> !s.isEmpty()).orElse(null);
    String message;
    try {
      ApiError error = (ApiError) StrictJson.decode(response.body(), ApiError.class, false);
      message = error.code() == status ? error.message() : "HTTP " + status + " with an error body of code " + error.code() + ": " + error.message();
    } catch (StrictJson.DecodingException e) {
      message = "HTTP " + status + " from " + route.method + " " + route.path + " without the API's error body";
    }
    // Every route this client calls exists: a 404 naming no route means the base URL is not the service's /api.
    boolean noRoute = "ROUTE_NOT_FOUND".equals(name) || name == null && message.startsWith("No route ");
    if (status == 404 && noRoute) {
      return new ApiException(ApiException.Kind.OTHER_STATUS, status, message + " (is the base URL right? it is the service's address ending with /api)", requestId, null, name, null);
    }
    return new ApiException(ApiException.Kind.of(status), status, message, requestId, RetryPolicy.retryAfter(response), name, null);
  }

  /** The event stream's answer other than 200 (GET /events): the API's message if its body has one, else the status. */
  static ApiException streamRefusal(HttpResponse<String> response) {
    int status = response.statusCode();
    String message = "HTTP " + status + " from GET /events";
    try {
      JsonElement error = StrictJson.parse(response.body());
      if (error.isJsonObject() && error.getAsJsonObject().has("message")) message = error.getAsJsonObject().get("message").getAsString();
    } catch (RuntimeException notTheApisError) {
      // The status says enough.
    }
    String requestId = response.headers().firstValue(Headers.REQUEST_ID).orElse(null);
    String name = response.headers().firstValue(Headers.ERROR_NAME).orElse(null);
    return new ApiException(ApiException.Kind.of(status), status, message, requestId, RetryPolicy.retryAfter(response), name, null);
  }

  /** A lookup whose not-found is an empty Optional; every other failure stays a failure (on the thread that completes it). */
  static <T> CompletableFuture<Optional<T>> notFoundAsEmpty(CompletableFuture<T> lookup) {
    return lookup.handle((value, failure) -> {
      if (failure == null) return CompletableFuture.completedFuture(Optional.of(value));
      ApiException e = ApiException.unwrap(failure);
      return e.kind() == ApiException.Kind.NOT_FOUND ? CompletableFuture.completedFuture(Optional.<T>empty()) : CompletableFuture.<Optional<T>>failedFuture(e);
    }).thenCompose(f -> f);
  }

  /** An answer that sending again would not change: a 4xx other than 408 (the request came too slowly) and 429 (later). */
  static boolean definite(ApiException e) {
    return e.status() >= 400 && e.status() < 500 && e.status() != 408 && e.status() != 429
        || e.kind() == ApiException.Kind.INVALID_RESPONSE || e.kind() == ApiException.Kind.INVALID_ARGUMENT;
  }
}
