package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * After close(), no thread of the client is left and a reloaded plugin's class loader can be collected: three
 * reloads ({@link ReloadServer}) in a JVM of their own, on the JVM this runs on (CI: Java 17). Soft references
 * are cleared at every collection there, as they are before a server would run out of memory.
 */
class ReloadTest {
  private static String where(Class<?> type) throws Exception {
    return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  @Test
  void whenAPluginIsReloadedThreeTimes_thenEachClassLoaderIsCollected_andNoThreadOfTheClientIsLeft() throws Exception {
    String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> classPath = List.of(where(ReloadPlugin.class), where(CommunityApi.class), where(JsonObject.class));
    List<String> command = new ArrayList<>(List.of(java, "-XX:SoftRefLRUPolicyMSPerMB=0", "-cp", String.join(File.pathSeparator, classPath),
        ReloadServer.class.getName()));
    command.addAll(classPath);
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      assertTrue(child.waitFor(90, TimeUnit.SECONDS), "the reloads did not end within 90 s");
      String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals("3 of 3 class loaders collected, 0 client threads left\n", output);
    } finally {
      child.destroyForcibly();
    }
  }
}
