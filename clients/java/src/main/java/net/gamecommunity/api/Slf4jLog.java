package net.gamecommunity.api;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** SLF4J's logger {@value ClientLog#LOGGER_NAME}, found by name: the client needs no dependency on SLF4J. */
final class Slf4jLog {
  private Slf4jLog() {}

  /** @return a log writing to SLF4J, or null when SLF4J is not on the client's class path */
  static @Nullable ClientLog find() {
    ClassLoader loader = ClientLog.class.getClassLoader();
    try {
      Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, loader);
      Class<?> loggerType = Class.forName("org.slf4j.Logger", true, loader);
      Object logger = factory.getMethod("getLogger", String.class).invoke(null, ClientLog.LOGGER_NAME);
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      MethodType type = MethodType.methodType(void.class, String.class, Throwable.class);
      MethodHandle debug = lookup.findVirtual(loggerType, "debug", type).bindTo(logger);
      MethodHandle info = lookup.findVirtual(loggerType, "info", type).bindTo(logger);
      MethodHandle warn = lookup.findVirtual(loggerType, "warn", type).bindTo(logger);
      return (level, message, error) -> {
        try {
          (level == ClientLog.Level.DEBUG ? debug : level == ClientLog.Level.INFO ? info : warn).invoke(message, error);
        } catch (Error e) {
          throw e;
        } catch (Throwable loggerFailed) {
          // A logger that throws must not fail the client's work.
        }
      };
    } catch (ReflectiveOperationException | LinkageError | RuntimeException absent) {
      return null;
    }
  }
}
