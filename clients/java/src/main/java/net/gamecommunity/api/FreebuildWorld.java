package net.gamecommunity.api;

import java.time.Instant;

/**
 * A freebuild world (named so to keep clear of Bukkit's {@code World}). Change it with {@link WorldUpdate}.
 *
 * @param id the world's id
 * @param name its name
 * @param ownerId the id of the player who owns it
 * @param type its type, a free text
 * @param state whether it is loaded, a free text the game sets (seen: {@code unLoaded}, {@code loaded})
 * @param lastUsed the last moment someone was on it
 * @param status whether it is public, a free text the game sets
 * @param spawnLocation its spawn position, a free text of coordinates; null when not set
 * @param gameruleRandomTickSpeed the random tick speed game rule
 * @param gameruleDaylightCycle whether days and nights pass
 * @param gamerulePvp whether players may fight each other
 * @param gamerulePlayerDamage whether players take damage
 * @param tag a tag; null when none
 */
public record FreebuildWorld(
    int id,
    String name,
    int ownerId,
    String type,
    String state,
    Instant lastUsed,
    String status,
    @Nullable String spawnLocation,
    int gameruleRandomTickSpeed,
    boolean gameruleDaylightCycle,
    boolean gamerulePvp,
    boolean gamerulePlayerDamage,
    @Nullable String tag) {}
