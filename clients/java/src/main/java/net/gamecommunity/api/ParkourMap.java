package net.gamecommunity.api;

/** A parkour map; {@code spawnLocation} holds x, y, z, world, pitch, yaw as one text. */
public record ParkourMap(int id, String name, boolean enable, @Nullable String spawnLocation, @Nullable String difficulty) {}
