package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class StrictJsonTest {
  private static final String MAP = "{\"id\":6,\"name\":\"Sky run\",\"enable\":true,\"spawnLocation\":null,\"difficulty\":\"hard\"}";

  private static String failure(String json, Class<?> type) {
    return assertThrows(StrictJson.DecodingException.class, () -> StrictJson.decode(json, type)).getMessage();
  }

  @Test
  void whenEveryFieldIsThereWithItsType_thenTheRecordHoldsThem_andNullableFieldsMayBeNull() {
    ParkourMap map = (ParkourMap) StrictJson.decode(MAP, ParkourMap.class);
    assertEquals(new ParkourMap(6, "Sky run", true, null, "hard"), map);
  }

  @Test
  void whenAFieldIsUnknown_thenDecodingFailsNamingIt() {
    assertEquals("$: unknown field(s) extra", failure(MAP.replace("}", ",\"extra\":1}"), ParkourMap.class));
  }

  @Test
  void whenAFieldIsMissing_thenDecodingFailsNamingIt() {
    assertEquals("$.difficulty: missing", failure(MAP.replace(",\"difficulty\":\"hard\"", ""), ParkourMap.class));
  }

  @Test
  void whenANonNullableFieldIsNull_thenDecodingFails() {
    assertEquals("$.name: null where a value is required", failure(MAP.replace("\"Sky run\"", "null"), ParkourMap.class));
  }

  @Test
  void whenTypesAreWrong_thenDecodingFails_whereGsonWouldHaveConverted() {
    assertTrue(failure(MAP.replace("\"id\":6", "\"id\":\"6\""), ParkourMap.class).startsWith("$.id: expected an integer"));
    assertTrue(failure(MAP.replace("\"id\":6", "\"id\":6.5"), ParkourMap.class).startsWith("$.id: expected an integer"));
    assertTrue(failure(MAP.replace("\"id\":6", "\"id\":2147483648"), ParkourMap.class).contains("out of range"));
    assertTrue(failure(MAP.replace("true", "\"true\""), ParkourMap.class).startsWith("$.enable: expected a boolean"));
    assertTrue(failure(MAP.replace("\"hard\"", "7"), ParkourMap.class).startsWith("$.difficulty: expected a string"));
  }

  @Test
  void whenTimestampsAreIso8601_thenTheyAreInstants_andAnythingElseFails() {
    RewardLog log = (RewardLog) StrictJson.decode("{\"id\":1,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}", RewardLog.class);
    assertEquals(Instant.parse("2026-11-22T09:15:30Z"), log.rewardedAt());
    assertTrue(failure("{\"id\":1,\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"22/11/2026\"}", RewardLog.class).startsWith("$.rewardedAt: expected a timestamp"));
  }

  @Test
  void whenAListHoldsABadElement_thenThePathNamesItsIndex() {
    String message = assertThrows(StrictJson.DecodingException.class,
        () -> StrictJson.decode("[" + MAP + ",null]", Route.ALL_MAPS.response)).getMessage();
    assertEquals("$[1]: null where a value is required", message);
  }

  @Test
  void whenTheTextIsNotStrictJson_thenDecodingFails() {
    assertTrue(failure("{'id':6}", ParkourMap.class).startsWith("$: not valid JSON"));
    assertTrue(failure(MAP + " []", ParkourMap.class).startsWith("$: "));
  }

  @Test
  void whenARequestRecordIsEncoded_thenUnsetOptionalFieldsAreLeftOut_andInstantsAreWholeSeconds() {
    assertEquals("{\"playerId\":1,\"rewardId\":42}", StrictJson.encode(NewRewardLog.now(1, 42)).toString());
    assertEquals("{\"playerId\":1,\"rewardId\":42,\"rewardedAt\":\"2026-11-22T09:15:30Z\"}",
        StrictJson.encode(NewRewardLog.at(1, 42, Instant.parse("2026-11-22T09:15:30.250Z"))).toString());
    assertNull(StrictJson.encode(NewApiUser.named("bot")).get("role"));
  }
}
