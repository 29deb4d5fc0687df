package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.util.Objects;

/**
 * One event of the live stream ({@link CommunityApi#subscribe}): what a webhook receiver gets, with its
 * place in the stream.
 *
 * @param id opaque; keep the last one handled to resume after it when your plugin starts again
 *     ({@link CommunityApi#subscribe(java.util.Collection, String, EventListener)})
 * @param type {@code reward_log.created}, {@code cosmetic.updated}, …
 * @param timestamp when the write happened, ISO 8601 in UTC
 * @param data the record as the API answers it ({@code RewardLog}, {@code Cosmetic}, …)
 */
public record Event(String id, String type, String timestamp, JsonObject data) {
  /**
   * Every part is required.
   *
   * @param id opaque, the event's place in the stream
   * @param type the event type
   * @param timestamp when the write happened, ISO 8601 in UTC
   * @param data the record as the API answers it
   */
  public Event {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(timestamp, "timestamp");
    Objects.requireNonNull(data, "data");
  }
}
