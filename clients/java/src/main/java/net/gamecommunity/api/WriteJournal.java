package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * {@link DurableWrites}' files: one per pending write (its route, Idempotency-Key, moment and body), named
 * so that they sort in the order the writes were made, each written whole or not at all (a temporary file
 * forced to the disk, then renamed). A file that cannot be read back is set aside as {@code .unreadable}.
 * What to send and when is {@link DurableWrites}' business.
 */
class WriteJournal {
  private static final String SUFFIX = ".json";

  /**
   * One saved write.
   *
   * @param file where it is kept
   * @param route its route (a POST that creates)
   * @param key its Idempotency-Key
   * @param body its request body
   * @param queuedAt when it was made
   */
  record Saved(Path file, Route route, String key, JsonObject body, Instant queuedAt) {}

  private final Path directory;
  private final AtomicLong sequence = new AtomicLong();

  WriteJournal(Path directory) {
    this.directory = directory;
  }

  /**
   * Reads back the writes saved in the directory (created if missing), in the order they were made; one
   * that cannot be read is set aside, and given to {@code unreadable} with where it went.
   *
   * @throws IOException when the directory cannot be created or read
   */
  List<Saved> readAll(BiConsumer<Path, Exception> unreadable) throws IOException {
    Files.createDirectories(directory);
    List<Path> files;
    try (Stream<Path> list = Files.list(directory)) {
      files = list.filter(f -> f.getFileName().toString().endsWith(SUFFIX)).sorted().toList();
    }
    List<Saved> saved = new ArrayList<>();
    for (Path file : files) {
      try {
        saved.add(read(file));
      } catch (IOException | RuntimeException e) {
        // Kept aside for a person to look at: it would fail the same way on every start.
        Path aside = file.resolveSibling(file.getFileName() + ".unreadable");
        try {
          Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException ignored) {
          // reported all the same
        }
        unreadable.accept(aside, e);
      }
    }
    return saved;
  }

  private static Saved read(Path file) throws IOException {
    JsonObject saved = StrictJson.parse(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
    Route route = Route.valueOf(saved.get("route").getAsString());
    if (route != Route.CREATE_REWARD_LOG && route != Route.CREATE_FORM) throw new IllegalArgumentException("not a durable route: " + route);
    return new Saved(file, route, saved.get("idempotencyKey").getAsString(), saved.getAsJsonObject("body"),
        Instant.parse(saved.get("queuedAt").getAsString()));
  }

  /** A new write, named after {@code queuedAt} and a sequence so that sorted by name, files come back in the order they were made. */
  Saved entry(Route route, String key, JsonObject body, Instant queuedAt) {
    Path file = directory.resolve(String.format("%019d-%06d-%s%s", queuedAt.toEpochMilli(), sequence.incrementAndGet() % 1_000_000, key, SUFFIX));
    return new Saved(file, route, key, body, queuedAt);
  }

  /** Saves the write in its file, durably. */
  void save(Saved write) throws IOException {
    JsonObject saved = new JsonObject();
    saved.addProperty("route", write.route().name());
    saved.addProperty("idempotencyKey", write.key());
    saved.addProperty("queuedAt", write.queuedAt().toString());
    saved.add("body", write.body());
    writeDurably(write.file(), saved.toString());
  }

  /** Writes the text to a temporary file, forces it to the disk, then renames it: a crash leaves the whole file or none. */
  private static void writeDurably(Path file, String text) throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      channel.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
      channel.force(true);
    }
    try {
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** Forgets an answered write. Left on disk, it would be sent again at the next start: harmless within 24 hours (same key). */
  void remove(Saved write) {
    try {
      Files.deleteIfExists(write.file());
    } catch (IOException e) {
      // sent again at the next start, recorded once by its key
    }
  }
}
