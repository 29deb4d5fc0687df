package net.gamecommunity.api;

import java.net.http.HttpRequest;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/** The W3C Trace Context headers of {@link CommunityApi.Builder#traceContext}: those well-formed, sent; the rest, not. */
final class TraceHeaders {
  /** version-traceid-parentid-flags, lower-case hex; an all-zero trace or parent id is invalid. */
  private static final Pattern TRACEPARENT = Pattern.compile("00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}");
  /** At most 32 list members in 512 characters, printable ASCII without a quote or backslash. */
  private static final Pattern TRACESTATE = Pattern.compile("[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]{1,512}");
  private static final AtomicBoolean WARNED = new AtomicBoolean();

  private TraceHeaders() {}

  /** @return whether {@code traceparent} is a version-00 W3C traceparent (what is sent, and what an event may carry) */
  static boolean wellFormed(String traceparent) {
    return traceparent != null && TRACEPARENT.matcher(traceparent).matches();
  }

  static void add(Supplier<? extends Map<String, String>> context, HttpRequest.Builder request, ClientLog log) {
    Map<String, String> headers;
    try {
      headers = context.get();
    } catch (RuntimeException e) {
      // The plugin's supplier failed: the call goes without a trace, said once.
      if (WARNED.compareAndSet(false, true)) log.log(ClientLog.Level.WARNING, "the traceContext supplier threw: calls are sent without a traceparent", e);
      return;
    }
    if (headers == null) return;
    String parent = headers.get("traceparent");
    if (!wellFormed(parent)) return;
    request.header("traceparent", parent);
    String state = headers.get("tracestate");
    if (state != null && TRACESTATE.matcher(state).matches()) request.header("tracestate", state);
  }
}
