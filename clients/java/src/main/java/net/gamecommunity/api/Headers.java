package net.gamecommunity.api;

/**
 * The names of the HTTP headers this client sends and reads (docs/CALLING.md): one vocabulary for the
 * request pipeline ({@link Transport}, {@link Answer}, {@link Failures}) and the files that build their own
 * requests or read their own answers (pollers, syncs, durable writes, subscriptions).
 */
final class Headers {
  static final String API_KEY = "X-API-Key";
  static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  static final String IF_NONE_MATCH = "If-None-Match";
  static final String IF_MATCH = "If-Match";
  static final String ETAG = "ETag";
  static final String REQUEST_ID = "X-Request-Id";
  static final String RETRY_AFTER = "Retry-After";
  static final String ERROR_NAME = "Error-Name";
  static final String RATE_LIMIT = "RateLimit";
  static final String RATE_LIMIT_POLICY = "RateLimit-Policy";
  static final String SYNC_TOKEN = "Sync-Token";
  static final String LINK = "Link";
  static final String LAST_EVENT_ID = "Last-Event-ID";

  private Headers() {}
}
