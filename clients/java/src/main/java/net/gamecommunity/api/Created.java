package net.gamecommunity.api;

/**
 * What a POST created, with the Idempotency-Key it was sent with. {@code replayed} is true when the
 * service had already run this request (an earlier attempt got through) and sent back its first answer.
 */
public record Created<T>(T value, boolean replayed, String idempotencyKey) {}
