package net.gamecommunity.api;

import java.time.Instant;

/**
 * A shop item usable for a while.
 *
 * @param id the item's id, a text
 * @param itemName its name
 * @param itemDescription its description
 * @param price its price, in credits
 * @param startDate the moment from which it can be used (included)
 * @param endDate the moment its use ends (excluded)
 */
public record TemporaryItem(String id, String itemName, String itemDescription, int price, Instant startDate, Instant endDate) {}
