package net.gamecommunity.api;

import java.time.Instant;

/** A freebuild world (named so to keep clear of Bukkit's {@code World}). Change it with {@link WorldUpdate}. */
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
