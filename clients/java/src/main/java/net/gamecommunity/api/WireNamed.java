package net.gamecommunity.api;

/** An enum the API spells its own way ({@code eligibleGame}, {@code week}): the decoder matches {@link #wireName()}. */
interface WireNamed {
  /** @return the value as the API writes it */
  String wireName();
}
