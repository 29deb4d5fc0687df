package net.gamecommunity.api;

/** A cosmetic item. Change it with {@link CosmeticUpdate}. */
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
