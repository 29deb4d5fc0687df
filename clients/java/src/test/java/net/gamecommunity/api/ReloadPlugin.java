package net.gamecommunity.api;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a plugin does between its onEnable and its onDisable, loaded by {@link ReloadServer} in a class loader of
 * its own as a server's /reload loads a plugin: a subscription (left open until close), a sync, a durable write.
 */
public final class ReloadPlugin {
  private ReloadPlugin() {}

  /**
   * One enable and disable.
   *
   * @param baseUrl the API's base URL
   * @param journal the folder of the durable writes
   * @throws Exception when a step fails
   */
  public static void enableThenDisable(String baseUrl, String journal) throws Exception {
    CommunityApi api = CommunityApi.builder(baseUrl, "gsk_test").threadNamePrefix("reload-plugin").build();
    CountDownLatch received = new CountDownLatch(1);
    api.subscribe(List.of("reward_log.created"), new EventListener() {
      @Override
      public void onEvent(Event event) {
        received.countDown();
      }
    });
    // A second subscription the service has not answered yet when the client closes.
    api.subscribe(List.of("held"), new EventListener() {
      @Override
      public void onEvent(Event event) {}
    });
    if (!received.await(10, TimeUnit.SECONDS)) throw new AssertionError("no event came");
    api.mapsSync().sync().get(10, TimeUnit.SECONDS);
    try (DurableWrites writes = DurableWrites.open(api, Path.of(journal), outcome -> {})) {
      writes.createRewardLog(NewRewardLog.now(1, 42)).get(10, TimeUnit.SECONDS);
    }
    api.close();
  }
}
