package org.bukkit;

import org.bukkit.scheduler.BukkitScheduler;

public final class Bukkit {
  private static Server server;

  private Bukkit() {}

  public static void setServer(Server server) {
    Bukkit.server = server;
  }

  public static Server getServer() {
    return server;
  }

  public static BukkitScheduler getScheduler() {
    return server.getScheduler();
  }
}
