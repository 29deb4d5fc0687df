package net.gamecommunity.api;

/**
 * A cosmetic item. Change it with {@link CosmeticUpdate}.
 *
 * @param id the cosmetic's id
 * @param name its name, unique (case-sensitively)
 * @param type its type, a free text (such as {@code hat})
 * @param rarity its rarity, a free text (such as {@code rare})
 * @param game the game it belongs to (such as {@code lobby})
 * @param argumentFr its description in French
 * @param argumentEn its description in English (sent as {@code argument_EN} in updates)
 * @param image the path of its image in the texture pack
 * @param lootbox whether it can come from lootboxes
 * @param price its price in the shop, in credits
 * @param description a description; null when none
 * @param collection the collection it belongs to; null when none
 * @param render its 3D display; null when none
 * @param permanent whether it is kept for good once obtained (else it expires)
 */
public record Cosmetic(
    int id,
    String name,
    String type,
    String rarity,
    String game,
    String argumentFr,
    String argumentEn,
    String image,
    boolean lootbox,
    int price,
    @Nullable String description,
    @Nullable String collection,
    @Nullable String render,
    boolean permanent) {}
