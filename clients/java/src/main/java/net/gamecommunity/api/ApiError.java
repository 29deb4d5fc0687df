package net.gamecommunity.api;

/** The body of every failure: {@code code} equals the HTTP status. */
public record ApiError(int code, String message) {}
