package example.paper;

import java.time.Duration;
import java.util.List;
import net.gamecommunity.api.ApiException;
import net.gamecommunity.api.CommunityApi;
import net.gamecommunity.api.CosmeticUpdate;
import net.gamecommunity.api.ListPoller;
import net.gamecommunity.api.NewRewardLog;
import net.gamecommunity.api.ParkourMap;
import org.bukkit.Bukkit;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.plugin.java.JavaPlugin;

/** The README's Paper example: compiled by build.sh and run by ExamplePluginTest against a live server. */
public final class CommunityPlugin extends JavaPlugin implements Listener {
  private CommunityApi api;
  private ListPoller.Subscription mapsPolling;
  private volatile List<ParkourMap> maps = List.of();

  @Override
  public void onEnable() {
    api = CommunityApi.builder(getConfig().getString("community-api.url"), getConfig().getString("community-api.key"))
        .userAgent("CommunityPlugin/1.0")
        .build();
    // An unchanged list costs the service a 304 and calls nothing here.
    mapsPolling = api.mapsPoller().start(Duration.ofSeconds(30),
        fresh -> maps = fresh,
        error -> getLogger().warning("Parkour maps not refreshed: " + error.getMessage()));
    getServer().getPluginManager().registerEvents(this, this);
  }

  @Override
  public void onDisable() {
    mapsPolling.close();
    api.close(Duration.ofSeconds(3)); // rewards being recorded get 3 s to finish; nothing is left hanging
  }

  @EventHandler
  public void onJoin(PlayerJoinEvent event) {
    Player player = event.getPlayer();
    // A player without a community account is an empty Optional; a slow service is given 2 s, retries included.
    api.withDeadline(Duration.ofSeconds(2)).findPlayerByPseudo(player.getName())
        .thenAccept(found -> found.ifPresent(profile -> Bukkit.getScheduler().runTask(this,
            () -> player.sendMessage("You have " + profile.credit() + " credits"))))
        .exceptionally(failure -> {
          getLogger().warning("Community API: " + ApiException.unwrap(failure));
          return null;
        });
  }

  /** Recorded once even if the call is retried: every attempt carries the same Idempotency-Key. */
  public void grantReward(Player player, int communityPlayerId, int rewardId) {
    api.createRewardLog(NewRewardLog.now(communityPlayerId, rewardId))
        .thenAccept(created -> Bukkit.getScheduler().runTask(this, () -> player.sendMessage("Reward granted")))
        .exceptionally(failure -> {
          getLogger().warning("Reward " + rewardId + " not recorded: " + ApiException.unwrap(failure));
          return null;
        });
  }

  /** Applies only if nobody changed the cosmetic since it was read; else says so. */
  public void discount(int cosmeticId, int percent) {
    api.getCosmeticTagged(cosmeticId)
        .thenCompose(read -> api.updateCosmetic(CosmeticUpdate.of(cosmeticId)
            .price(read.value().price() * (100 - percent) / 100)
            .ifMatch(read.etag())
            .build()))
        .exceptionally(failure -> {
          ApiException e = ApiException.unwrap(failure);
          getLogger().warning(e.kind() == ApiException.Kind.PRECONDITION_FAILED
              ? "Cosmetic " + cosmeticId + " was changed meanwhile: discount not applied"
              : "Discount failed: " + e);
          return null;
        });
  }

  public List<ParkourMap> maps() {
    return maps;
  }
}
