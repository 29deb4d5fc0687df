package org.bukkit.configuration.file;

import java.util.HashMap;
import java.util.Map;

public class FileConfiguration {
  private final Map<String, Object> values = new HashMap<>();

  public String getString(String path) {
    Object value = values.get(path);
    return value == null ? null : value.toString();
  }

  public void set(String path, Object value) {
    values.put(path, value);
  }
}
