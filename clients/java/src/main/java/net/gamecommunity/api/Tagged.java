package net.gamecommunity.api;

/**
 * A value and the ETag it was sent with: give the ETag to {@link CosmeticUpdate.Builder#ifMatch} to write safely.
 *
 * @param <T> the value's type
 * @param value the value
 * @param etag its version, as the service sent it (quotes included); null if it sent none
 */
public record Tagged<T>(T value, @Nullable String etag) {}
