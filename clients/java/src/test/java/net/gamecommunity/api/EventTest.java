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
  void whenATypeOrAnErrorNameIsKnown_thenItsConstantComesBack_andANewerOneIsUnknown() {
    JsonObject data = new JsonObject();
    assertEquals(EventType.REWARD_LOG_CREATED, new Event("1", "reward_log.created", Instant.EPOCH, data).eventType());
    assertEquals("infected_stats.updated", EventType.INFECTED_STATS_UPDATED.wireName());
    assertEquals("leaderboard.period_started", EventType.LEADERBOARD_PERIOD_STARTED.wireName());
    for (EventType type : EventType.values()) if (type != EventType.UNKNOWN) assertEquals(type, EventType.of(type.wireName()));
    Event newer = new Event("2", "leaderboard.season_ended", Instant.EPOCH, data);
    assertEquals(EventType.UNKNOWN, newer.eventType());
    assertEquals("leaderboard.season_ended", newer.type());
    assertEquals(ErrorName.DUPLICATE, ErrorName.of("DUPLICATE"));
    assertEquals(ErrorName.UNKNOWN, ErrorName.of("A_NEWER_NAME"));
    assertEquals(ErrorName.UNKNOWN, ErrorName.of(null));
    assertEquals(ErrorName.UNKNOWN, ApiException.of(ApiException.Kind.CONFLICT, 409, "no name").errorName());
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
