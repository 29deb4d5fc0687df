package net.gamecommunity.api;

/**
 * A parkour map.
 *
 * @param id the map's id
 * @param name its name
 * @param enable whether it is open to play
 * @param spawnLocation its spawn point, x, y, z, world, pitch, yaw as one text; null when not set
 * @param difficulty its difficulty, a free text (seen: {@code easy}, {@code hard}); null when not set
 */
public record ParkourMap(int id, String name, boolean enable, @Nullable String spawnLocation, @Nullable String difficulty) {}
