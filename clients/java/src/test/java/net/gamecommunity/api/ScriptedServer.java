package net.gamecommunity.api;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** An HTTP server on 127.0.0.1 answering from a script, recording the headers the client sent. */
final class ScriptedServer implements AutoCloseable {
  record Reply(int status, String body, Map<String, String> headers, Duration delay) {
    static Reply of(int status, String body, Map<String, String> headers) {
      return new Reply(status, body, headers, Duration.ZERO);
    }
  }

  final Queue<Reply> script = new ConcurrentLinkedQueue<>();
  /** Replies by method, used before the script: the same one to every request of that method. */
  private final Map<String, Reply> byMethod = new java.util.concurrent.ConcurrentHashMap<>();
  final List<Map<String, String>> received = new CopyOnWriteArrayList<>();
  /** Requests being answered now, and the most there were at once. */
  final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
  final java.util.concurrent.atomic.AtomicInteger mostInFlight = new java.util.concurrent.atomic.AtomicInteger();
  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  ScriptedServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(threads);
    server.createContext("/", this::answer);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/api";
  }

  void route(String method, Reply reply) {
    byMethod.put(method, reply);
  }

  private void answer(HttpExchange exchange) throws IOException {
    mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    try {
      reply(exchange);
    } finally {
      inFlight.decrementAndGet();
    }
  }

  private void reply(HttpExchange exchange) throws IOException {
    String requestBody = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    received.add(Map.of(
        "body", requestBody,
        "method", exchange.getRequestMethod(),
        "uri", exchange.getRequestURI().toString(),
        "idempotencyKey", String.valueOf(exchange.getRequestHeaders().getFirst("Idempotency-Key")),
        "ifNoneMatch", String.valueOf(exchange.getRequestHeaders().getFirst("If-None-Match")),
        "apiKey", String.valueOf(exchange.getRequestHeaders().getFirst("X-API-Key")),
        "userAgent", String.valueOf(exchange.getRequestHeaders().getFirst("User-Agent")),
        "lastEventId", String.valueOf(exchange.getRequestHeaders().getFirst("Last-Event-ID")),
        "traceparent", String.valueOf(exchange.getRequestHeaders().getFirst("traceparent")),
        "tracestate", String.valueOf(exchange.getRequestHeaders().getFirst("tracestate"))));
    Reply next = byMethod.get(exchange.getRequestMethod());
    if (next == null) next = script.poll();
    if (next == null) next = Reply.of(500, "{\"code\":500,\"message\":\"script ran out\"}", Map.of());
    try {
      Thread.sleep(next.delay().toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    byte[] body = next.body().getBytes(StandardCharsets.UTF_8);
    next.headers().forEach(exchange.getResponseHeaders()::add);
    exchange.getResponseHeaders().add("Content-Type", "application/json; charset=utf-8");
    exchange.getResponseHeaders().add("X-Request-Id", "req-" + received.size());
    exchange.sendResponseHeaders(next.status(), next.status() == 304 ? -1 : body.length);
    if (next.status() != 304) exchange.getResponseBody().write(body);
    exchange.close();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
