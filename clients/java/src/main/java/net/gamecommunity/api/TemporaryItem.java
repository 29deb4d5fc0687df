package net.gamecommunity.api;

import java.time.Instant;

/** A shop item usable from {@code startDate} (included) to {@code endDate} (excluded). Its id is a text. */
public record TemporaryItem(String id, String itemName, String itemDescription, int price, Instant startDate, Instant endDate) {}
