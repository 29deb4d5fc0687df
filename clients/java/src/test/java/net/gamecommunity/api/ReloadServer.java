package net.gamecommunity.api;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A game server's /reload, three times, in a JVM of its own ({@link ReloadTest} starts it): {@link ReloadPlugin},
 * the client and Gson loaded in a class loader of their own each time, as a shaded plugin holds them, used
 * against a fake service, closed and dropped. Prints how many of the class loaders were collected and how many
 * of the client's threads are left.
 */
public final class ReloadServer {
  static final String EVENT = "id: 00000000000000100000000000000001\nevent: reward_log.created\ndata: {\"type\":\"reward_log.created\","
      + "\"timestamp\":\"2026-11-25T10:00:00.000Z\",\"data\":{\"id\":1,\"playerId\":1,\"rewardId\":1,\"rewardedAt\":\"2026-11-25T10:00:00Z\"}}\n\n";

  private ReloadServer() {}

  /**
   * Runs the three reloads.
   *
   * @param args the class path of the plugin's loader: the test classes, the client's jar, Gson's jar
   * @throws Exception when a reload fails
   */
  public static void main(String[] args) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    ExecutorService serverThreads = Executors.newCachedThreadPool();
    CountDownLatch stopping = new CountDownLatch(1);
    server.setExecutor(serverThreads);
    server.createContext("/", exchange -> answer(exchange, stopping));
    server.start();
    Path journal = Files.createTempDirectory("reload-journal");
    List<WeakReference<ClassLoader>> loaders = new ArrayList<>();
    try {
      String baseUrl = "http://127.0.0.1:" + server.getAddress().getPort() + "/api";
      URL[] classPath = new URL[args.length];
      for (int i = 0; i < args.length; i++) classPath[i] = Path.of(args[i]).toUri().toURL();
      for (int reload = 0; reload < 3; reload++) loaders.add(enableThenDisable(classPath, baseUrl, journal));
      long until = System.currentTimeMillis() + 30_000;
      while ((alive(loaders) > 0 || clientThreads() > 0) && System.currentTimeMillis() < until) {
        System.gc();
        Thread.sleep(50);
      }
      System.out.println((loaders.size() - alive(loaders)) + " of " + loaders.size() + " class loaders collected, " + clientThreads() + " client threads left");
    } finally {
      stopping.countDown();
      server.stop(0);
      serverThreads.shutdownNow();
    }
  }

  private static long alive(List<WeakReference<ClassLoader>> loaders) {
    return loaders.stream().filter(l -> l.get() != null).count();
  }

  /** One plugin's life; threads made while it enables inherit its loader, as on a server. */
  private static WeakReference<ClassLoader> enableThenDisable(URL[] classPath, String baseUrl, Path journal) throws Exception {
    Thread self = Thread.currentThread();
    ClassLoader before = self.getContextClassLoader();
    try (URLClassLoader loader = new URLClassLoader("plugin", classPath, ClassLoader.getPlatformClassLoader())) {
      self.setContextClassLoader(loader);
      loader.loadClass(ReloadPlugin.class.getName()).getMethod("enableThenDisable", String.class, String.class)
          .invoke(null, baseUrl, journal.toString());
      return new WeakReference<>(loader);
    } finally {
      self.setContextClassLoader(before);
    }
  }

  /** The plugin's clients' threads: named after their prefix, or any (the JDK HTTP client's among them) holding its loader. */
  private static long clientThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && (t.getName().startsWith("reload-plugin")
            || t.getContextClassLoader() instanceof URLClassLoader u && "plugin".equals(u.getName())))
        .count();
  }

  /** The event stream sends one event and stays open (types=held: answers nothing) until the server stops; the rest answer at once. */
  private static void answer(HttpExchange exchange, CountDownLatch stopping) throws IOException {
    String path = exchange.getRequestURI().getPath();
    exchange.getRequestBody().readAllBytes();
    if (path.equals("/api/events")) {
      if (!String.valueOf(exchange.getRequestURI().getQuery()).contains("held")) {
        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream body = exchange.getResponseBody();
        body.write(EVENT.getBytes(StandardCharsets.UTF_8));
        body.flush();
      }
      try {
        stopping.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.close();
      return;
    }
    boolean post = exchange.getRequestMethod().equals("POST");
    JsonObject log = new JsonObject();
    log.addProperty("id", 9);
    log.addProperty("playerId", 1);
    log.addProperty("rewardId", 42);
    log.addProperty("rewardedAt", "2026-11-22T09:15:30Z");
    byte[] reply = (post ? log.toString() : "[]").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    if (!post) exchange.getResponseHeaders().add("Sync-Token", "s1.A");
    exchange.sendResponseHeaders(post ? 201 : 200, reply.length);
    exchange.getResponseBody().write(reply);
    exchange.close();
  }
}
