package net.gamecommunity.api;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * The reader of one {@code text/event-stream} connection (server-sent events, WHATWG parsing): each line
 * is a field ({@code id}, {@code data}, {@code retry}, {@code traceparent}; comments and other fields are ignored), a blank line
 * ends a frame. One line is requested at a time, the next once the {@link Frames} it reports to is done
 * with a frame: a reader of frames slower than the stream holds the stream back. It knows nothing of the
 * API's events, of resuming nor of reconnecting: {@link EventSubscription} does, through {@link Frames}.
 */
final class EventStream implements Flow.Subscriber<String> {
  /** What one connection's reader reports, on the HTTP client's threads. */
  interface Frames {
    /**
     * The body is about to be read.
     *
     * @param body the body's subscription, to cancel it
     * @return false when the connection is no longer wanted: the reader cancels it and reads nothing
     */
    boolean opened(Flow.Subscription body);

    /** A line came: the connection is alive. */
    void alive();

    /**
     * The server's {@code retry:} hint.
     *
     * @param millis how long to wait before reconnecting, in milliseconds
     */
    void retry(long millis);

    /**
     * A frame ended (a blank line).
     *
     * @param id its {@code id:} field, or null
     * @param traceparent its {@code traceparent:} field when well-formed (the trace of the write that recorded the event), or null
     * @param data its {@code data:} lines, empty when it had none (a heartbeat, when it has no id either)
     * @return completed once the next line may be read; null to read no more (the connection is given up)
     */
    CompletableFuture<?> frame(String id, String traceparent, List<String> data);

    /**
     * The stream ended.
     *
     * @param error why: its failure, or an {@link IllegalStateException} when the server ended it
     */
    void ended(Throwable error);
  }

  private final Frames frames;
  private Flow.Subscription subscription;
  private String id;
  private String traceparent;
  private final List<String> data = new ArrayList<>();

  EventStream(Frames frames) {
    this.frames = frames;
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    if (!frames.opened(s)) {
      s.cancel();
      return;
    }
    subscription = s;
    s.request(1);
  }

  @Override
  public void onNext(String line) {
    frames.alive();
    if (!line.isEmpty()) {
      field(line);
      subscription.request(1);
      return;
    }
    String position = id;
    String trace = traceparent;
    List<String> frame = List.copyOf(data);
    id = null;
    traceparent = null;
    data.clear();
    CompletableFuture<?> handled = frames.frame(position, trace, frame);
    if (handled != null) handled.whenComplete((done, error) -> subscription.request(1));
  }

  private void field(String line) {
    if (line.startsWith(":")) return;
    int colon = line.indexOf(':');
    String name = colon < 0 ? line : line.substring(0, colon);
    String value = colon < 0 ? "" : line.substring(colon + 1);
    if (value.startsWith(" ")) value = value.substring(1);
    switch (name) {
      case "id" -> {
        if (value.indexOf('\0') < 0) id = value;
      }
      case "data" -> data.add(value);
      case "traceparent" -> traceparent = TraceHeaders.wellFormed(value) ? value : null;
      case "retry" -> {
        if (value.matches("\\d{1,9}")) frames.retry(Long.parseLong(value));
      }
      default -> {
        // event: the type is in the data too; anything else is ignored, as the format says.
      }
    }
  }

  @Override
  public void onError(Throwable error) {
    frames.ended(error);
  }

  @Override
  public void onComplete() {
    frames.ended(new IllegalStateException("the server ended the stream"));
  }
}
