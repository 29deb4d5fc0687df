package net.gamecommunity.api;

/**
 * A value and the ETag it was sent with: give the ETag to {@link CosmeticUpdate.Builder#ifMatch} to write safely.
 *
 * @param <T> the value's type
 * @param value the value
 * @param etag its version, as the service sent it (quotes included)
 */
public record Tagged<T>(T value, String etag) {}
