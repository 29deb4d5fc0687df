package org.bukkit.plugin;

import java.util.logging.Logger;

public interface Plugin {
  Logger getLogger();
}
