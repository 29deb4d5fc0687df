package net.gamecommunity.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class UpdateBuildersTest {
  @Test
  void whenAFieldIsNotSet_thenItIsNotSent_andAClearedFieldIsSentAsNull() {
    CosmeticUpdate update = CosmeticUpdate.of(3).price(450).clearDescription().build();
    assertEquals("{\"id\":3,\"price\":450,\"description\":null}", update.body.toString());
  }

  @Test
  void whenTheEnglishDescriptionIsSet_thenItIsSentAsArgument_EN() {
    assertEquals("{\"id\":3,\"argument_EN\":\"A halo\"}", CosmeticUpdate.of(3).argumentEn("A halo").build().body.toString());
  }

  @Test
  void whenNullIsGivenAsAValue_thenTheBuilderRefusesIt_pointingToClear() {
    NullPointerException e = assertThrows(NullPointerException.class, () -> CosmeticUpdate.of(3).description(null));
    assertTrue(e.getMessage().contains("clearDescription()"), e.getMessage());
    assertThrows(NullPointerException.class, () -> CosmeticUpdate.of(3).name(null));
  }

  @Test
  void whenTheTextNullIsSetInAClearableField_thenTheBuilderRefusesIt_sinceTheApiWouldClear() {
    assertThrows(IllegalArgumentException.class, () -> WorldUpdate.of(4).tag("null"));
    assertEquals("{\"id\":4,\"name\":\"null\"}", WorldUpdate.of(4).name("null").build().body.toString());
  }

  @Test
  void whenNothingIsChanged_thenBuildFails() {
    assertThrows(IllegalStateException.class, () -> WorldUpdate.of(4).build());
  }

  @Test
  void whenWorldFieldsAreSet_thenFlagsAreBooleans_andLastUsedIsWholeSeconds() {
    WorldUpdate update = WorldUpdate.of(4).gamerulePvp(false).lastUsed(Instant.parse("2026-11-20T18:42:00.900Z")).clearSpawnLocation().build();
    assertEquals("{\"id\":4,\"gamerulePvp\":false,\"lastUsed\":\"2026-11-20T18:42:00Z\",\"spawnLocation\":null}", update.body.toString());
  }

  @Test
  void whenAFormAnswerIsBuiltByName_thenEachAnswerGoesToItsQuestion_andMissingOnesAreNamed() {
    NewFormAnswer answer = NewFormAnswer.builder(7).video("https://example.org/v").question1("a").question2("b").question3("c")
        .question4("d").question5("e").stages(true, null, null).comment("hi").build();
    assertEquals(new NewFormAnswer(7, "https://example.org/v", "a", "b", "c", "d", "e", true, null, null, "hi"), answer);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> NewFormAnswer.builder(7).question1("a").question3("c").build());
    assertEquals("form answer: missing video, question2, question4, question5", e.getMessage());
  }
}
