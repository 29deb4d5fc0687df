package net.gamecommunity.api;

/** A value and the ETag it was sent with: give the ETag to {@link CosmeticUpdate.Builder#ifMatch} to write safely. */
public record Tagged<T>(T value, String etag) {}
