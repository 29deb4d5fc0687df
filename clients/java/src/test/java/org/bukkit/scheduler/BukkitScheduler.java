package org.bukkit.scheduler;

import org.bukkit.plugin.Plugin;

public interface BukkitScheduler {
  /** Runs the task on the server's main thread, at its next tick. */
  void runTask(Plugin plugin, Runnable task);
}
