package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One event of the live stream ({@link CommunityApi#subscribe}): what a webhook receiver gets, with its
 * place in the stream. Immutable: {@link #data()} gives a copy.
 *
 * <pre>{@code
 * if (event.eventType() == EventType.REWARD_LOG_CREATED) giveReward(event.as(RewardLog.class));
 * }</pre>
 */
public final class Event {
  private final String id;
  private final String type;
  private final Instant timestamp;
  private final String data;
  private final String traceparent;
  private final boolean strict;

  /**
   * An event, as the stream delivers it; for a plugin's tests, to hand its listener an event.
   *
   * @param id opaque, the event's place in the stream
   * @param type the event type, such as {@code reward_log.created}
   * @param timestamp when the write happened
   * @param data the record as the API answers it (copied)
   * @throws NullPointerException when an argument is null
   */
  public Event(String id, String type, Instant timestamp, JsonObject data) {
    this(id, type, timestamp, Objects.requireNonNull(data, "data").toString(), null, false);
  }

  Event(String id, String type, Instant timestamp, String data, String traceparent, boolean strict) {
    this.id = Objects.requireNonNull(id, "id");
    this.type = Objects.requireNonNull(type, "type");
    this.timestamp = Objects.requireNonNull(timestamp, "timestamp");
    this.data = Objects.requireNonNull(data, "data");
    this.traceparent = traceparent;
    this.strict = strict;
  }

  /**
   * Opaque: compare it, keep it, never parse it. Keep the last one handled to resume after it when your
   * plugin starts again ({@link CommunityApi#subscribe(java.util.Collection, String, EventListener)}).
   *
   * @return the event's place in the stream
   */
  public String id() {
    return id;
  }

  /** @return the event type: {@code reward_log.created}, {@code cosmetic.updated}, … */
  public String type() {
    return type;
  }

  /** @return {@link #type()} as a constant, to switch on; {@link EventType#UNKNOWN} for a type this client does not know */
  public EventType eventType() {
    return EventType.of(type);
  }

  /** @return when the write happened */
  public Instant timestamp() {
    return timestamp;
  }

  /**
   * The W3C {@code traceparent} of the write that recorded this event, when the service traces
   * (docs/OPERATIONS.md, "Traces"): to continue that trace in the handler, or link to it. With
   * OpenTelemetry: {@code propagator.extract(Context.current(), Map.of("traceparent", value), getter)}.
   *
   * @return the write's trace context; empty when the service does not trace, or for an event made by {@link #Event(String, String, Instant, JsonObject)}
   */
  public Optional<String> traceparent() {
    return Optional.ofNullable(traceparent);
  }

  /**
   * The record the event carries, decoded as the client decodes the API's answers: {@link RewardLog}
   * for {@code reward_log.created}, {@link Cosmetic} for {@code cosmetic.updated}, and so on.
   *
   * @param <T> the record's type
   * @param recordType the record's class
   * @return the record
   * @throws ApiException of kind {@link ApiException.Kind#INVALID_RESPONSE} when the data is not of that type
   */
  public <T> T as(Class<T> recordType) {
    try {
      return recordType.cast(StrictJson.decode(data, Objects.requireNonNull(recordType, "recordType"), strict));
    } catch (StrictJson.DecodingException e) {
      throw new ApiException(ApiException.Kind.INVALID_RESPONSE, 0, "event " + id + " (" + type + ") is not a "
          + recordType.getSimpleName() + ": " + e.getMessage(), null, null, null, e);
    }
  }

  /** @return the record as the API answers it: a new copy on each call, yours to change */
  public JsonObject data() {
    return StrictJson.parse(data).getAsJsonObject();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Event e && id.equals(e.id) && type.equals(e.type) && timestamp.equals(e.timestamp) && data.equals(e.data);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, type, timestamp, data);
  }

  @Override
  public String toString() {
    return "Event[" + id + " " + type + " at " + timestamp + "]";
  }
}
