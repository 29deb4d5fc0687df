package example.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import net.gamecommunity.api.ApiException;
import net.gamecommunity.api.CommunityApi;
import net.gamecommunity.api.Created;
import net.gamecommunity.api.DurableWrites;
import net.gamecommunity.api.NewRewardLog;
import net.gamecommunity.api.PlayerSummary;
import net.gamecommunity.api.RewardLog;
import org.junit.jupiter.api.Test;

/** What the README says a plugin's own tests can do: hand the plugin a fake CommunityApi, no service needed. */
class FakeClientTest {
  private static final PlayerSummary STEVE =
      new PlayerSummary(1, "Steve", 120, 1, false, false, false, null, "active", null, "en", 0, null, null, false, 0);

  @Test
  void whenAPluginsTestFakesTheClient_thenTheDefaultMethodsAnswerThroughTheFakedOnes() {
    List<String> keys = new CopyOnWriteArrayList<>();
    InvocationHandler answers = (proxy, method, args) -> switch (method.getName()) {
      case "getPlayerByPseudo" -> "Steve".equals(args[0]) ? CompletableFuture.completedFuture(STEVE)
          : CompletableFuture.failedFuture(ApiException.of(ApiException.Kind.NOT_FOUND, 404, "no player has that nick"));
      case "createRewardLog" -> {
        if (args.length == 1) yield InvocationHandler.invokeDefault(proxy, method, args);
        NewRewardLog log = (NewRewardLog) args[0];
        keys.add((String) args[1]);
        yield CompletableFuture.completedFuture(new Created<>(new RewardLog(9, log.playerId(), log.rewardId(), Instant.EPOCH), false, (String) args[1]));
      }
      default -> method.isDefault() ? InvocationHandler.invokeDefault(proxy, method, args) : null;
    };
    CommunityApi fake = (CommunityApi) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {CommunityApi.class}, answers);
    CommunityApi.Blocking blocking = new CommunityApi.Blocking(fake);

    assertEquals(Optional.of(STEVE), blocking.findPlayerByPseudo("Steve"));
    assertEquals(Optional.empty(), blocking.findPlayerByPseudo("Herobrine"));
    ApiException e = assertThrows(ApiException.class, () -> blocking.getPlayerByPseudo("Herobrine"));
    assertEquals(ApiException.Kind.NOT_FOUND, e.kind());
    Created<RewardLog> created = blocking.createRewardLog(NewRewardLog.now(1, 42));
    assertEquals(42, created.value().rewardId());
    assertEquals(List.of(created.idempotencyKey()), keys);
    assertTrue(!created.idempotencyKey().isBlank());
    // What needs a real client says so at once.
    assertThrows(IllegalArgumentException.class, () -> DurableWrites.open(fake, Path.of("unused"), outcome -> {}));
  }
}
