package example.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.bukkit.Bukkit;
import org.bukkit.Server;
import org.bukkit.entity.Player;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.plugin.PluginManager;
import org.bukkit.scheduler.BukkitScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The README's example on a pretend server whose "main thread" is this test's thread. */
@EnabledIfEnvironmentVariable(named = "COMMUNITY_API_URL", matches = ".+", disabledReason = "needs live servers: node clients/java/test-live.mjs")
class ExamplePluginTest {
  @Test
  void whenAPlayerJoins_thenTheExampleAsksTheApiOffTheMainThread_andMessagesThePlayerOnIt() throws InterruptedException {
    BlockingQueue<Runnable> mainThreadTasks = new LinkedBlockingQueue<>();
    List<Thread> schedulingThreads = new CopyOnWriteArrayList<>();
    BukkitScheduler scheduler = (plugin, task) -> {
      schedulingThreads.add(Thread.currentThread());
      mainThreadTasks.add(task);
    };
    PluginManager plugins = (listener, plugin) -> {};
    Bukkit.setServer(new Server() {
      @Override
      public BukkitScheduler getScheduler() {
        return scheduler;
      }

      @Override
      public PluginManager getPluginManager() {
        return plugins;
      }
    });
    List<String> messages = new CopyOnWriteArrayList<>();
    Player steve = new Player() {
      @Override
      public String getName() {
        return "Steve";
      }

      @Override
      public void sendMessage(String message) {
        messages.add(message);
      }
    };

    CommunityPlugin plugin = new CommunityPlugin();
    plugin.getConfig().set("community-api.url", System.getenv("COMMUNITY_API_URL"));
    plugin.getConfig().set("community-api.key", System.getenv("COMMUNITY_API_KEY_C"));
    plugin.onEnable();
    try {
      plugin.onJoin(new PlayerJoinEvent(steve));
      Runnable task = mainThreadTasks.poll(20, TimeUnit.SECONDS);
      assertNotNull(task, "the example never came back to the main thread");
      assertNotEquals(Thread.currentThread(), schedulingThreads.get(0));
      task.run();
      assertEquals(List.of("You have 120 credits"), messages);
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (plugin.maps().isEmpty() && System.nanoTime() < deadline) Thread.sleep(20);
      assertEquals(List.of("Sky run", "First steps"), plugin.maps().stream().map(m -> m.name()).toList());
    } finally {
      plugin.onDisable();
    }
  }
}
