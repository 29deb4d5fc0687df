package net.gamecommunity.api;

/**
 * What a POST created, with the Idempotency-Key it was sent with. {@code replayed} is true when the
 * service had already run this request (an earlier attempt got through) and sent back its first answer.
 *
 * @param <T> the created record's type
 * @param value the record created
 * @param replayed true when this is the service's stored answer to an earlier attempt
 * @param idempotencyKey the key the request was sent with
 */
public record Created<T>(T value, boolean replayed, String idempotencyKey) {}
