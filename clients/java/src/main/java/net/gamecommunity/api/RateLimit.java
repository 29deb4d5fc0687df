package net.gamecommunity.api;

import java.time.Instant;

/**
 * The API user's request budget as the service last reported it (its {@code RateLimit} and
 * {@code RateLimit-Policy} headers): from {@link CommunityApi#rateLimit()}. Every request counts, a
 * {@code 304} included; once {@code remaining} is 0 the service answers 429 until {@code resetsAt}.
 *
 * @param remaining requests left in the current window
 * @param limit requests allowed per window, or -1 when the service did not say
 * @param resetsAt when the current window ends and the budget is whole again (on this machine's clock)
 */
public record RateLimit(int remaining, int limit, Instant resetsAt) {}
