package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** An event's data, typed and immutable: what a listener (or a plugin's test handing one an event) relies on. */
class EventTest {
  private static Event rewardEvent() {
    JsonObject data = StrictJson.parse("{\"id\":9,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}").getAsJsonObject();
    Event event = new Event("opaque-id", "reward_log.created", Instant.parse("2026-11-22T09:15:30.250Z"), data);
    data.addProperty("rewardId", 7); // the caller's object, changed after: the event kept its own copy
    return event;
  }

  @Test
  void whenAnEventIsReadAsItsRecord_thenItDecodes_andItsDataCannotBeChangedThroughIt() {
    Event event = rewardEvent();
    assertEquals(new RewardLog(9, 1, 42, Instant.parse("2026-11-22T09:15:30Z")), event.as(RewardLog.class));
    event.data().addProperty("rewardId", 8);
    assertEquals(42, event.data().get("rewardId").getAsInt());
    assertEquals(Instant.parse("2026-11-22T09:15:30.250Z"), event.timestamp());
  }

  @Test
  void whenAnEventIsReadAsAnotherRecord_thenItFailsAsInvalidResponse() {
    ApiException e = assertThrows(ApiException.class, () -> rewardEvent().as(Cosmetic.class));
    assertEquals(ApiException.Kind.INVALID_RESPONSE, e.kind());
    assertTrue(e.getMessage().startsWith("event opaque-id (reward_log.created) is not a Cosmetic"), e.getMessage());
  }
}
