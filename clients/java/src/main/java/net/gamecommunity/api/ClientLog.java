package net.gamecommunity.api;

import java.util.Objects;

/**
 * Where the client says what a plugin's operator must know: a subscription that stopped for good, and the
 * exceptions a plugin's callbacks threw (event listeners, pollers, syncs, {@link DurableWrites}' outcome
 * listener), each at {@link Level#WARNING} with the reason and what to do; reconnections at
 * {@link Level#DEBUG}. Set by {@link CommunityApi.Builder#log}; by default {@link #standard()}.
 *
 * <pre>{@code
 * .log(ClientLog.of(getLogger()))   // a Paper or Spigot plugin's own logger: its lines carry the plugin's name
 * }</pre>
 */
@FunctionalInterface
public interface ClientLog {
  /** How much a line matters. */
  enum Level {
    /** What helps to understand a problem (a reconnection). */
    DEBUG,
    /** What went as it should. */
    INFO,
    /** What an operator should look at. */
    WARNING
  }

  /** The name of the logger {@link #standard()} writes to: a name, not a package, so that relocating the client keeps it. */
  String LOGGER_NAME = "community-api";

  /**
   * Writes one line.
   *
   * @param level how much it matters
   * @param message what happened, and what to do
   * @param error its cause, or null
   */
  void log(Level level, String message, @Nullable Throwable error);

  /**
   * SLF4J's logger {@value #LOGGER_NAME} when SLF4J is there (Paper and Velocity ship it), else
   * java.util.logging's (which Spigot and Bukkit show in the server's log).
   *
   * @return the default log
   */
  static ClientLog standard() {
    ClientLog slf4j = Slf4jLog.find();
    return slf4j != null ? slf4j : of(java.util.logging.Logger.getLogger(LOGGER_NAME));
  }

  /**
   * A java.util.logging logger's: DEBUG is {@code FINE}, WARNING is {@code WARNING}.
   *
   * @param logger the logger, a plugin's {@code getLogger()} for one
   * @return a log writing to it
   */
  static ClientLog of(java.util.logging.Logger logger) {
    Objects.requireNonNull(logger, "logger");
    return (level, message, error) -> logger.log(switch (level) {
      case DEBUG -> java.util.logging.Level.FINE;
      case INFO -> java.util.logging.Level.INFO;
      case WARNING -> java.util.logging.Level.WARNING;
    }, message, error);
  }
}
