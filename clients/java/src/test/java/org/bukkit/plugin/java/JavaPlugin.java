package org.bukkit.plugin.java;

import java.util.logging.Logger;
import org.bukkit.Bukkit;
import org.bukkit.Server;
import org.bukkit.configuration.file.FileConfiguration;
import org.bukkit.plugin.Plugin;

public abstract class JavaPlugin implements Plugin {
  private final FileConfiguration config = new FileConfiguration();

  public void onEnable() {}

  public void onDisable() {}

  public FileConfiguration getConfig() {
    return config;
  }

  public Server getServer() {
    return Bukkit.getServer();
  }

  @Override
  public Logger getLogger() {
    return Logger.getLogger(getClass().getSimpleName());
  }
}
