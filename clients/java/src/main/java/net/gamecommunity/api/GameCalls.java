package net.gamecommunity.api;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@link CommunityApi}'s calls on the game modes' data: the Infected statistics, the temporary items, the
 * Freebuild worlds and the parkour maps, with the pollers and caches that keep the lists fresh.
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface.
 */
public sealed interface GameCalls permits CommunityApi {
  /** @return the Infected v2 statistics of every player */
  CompletableFuture<List<InfectedStats>> getAllInfectedStats();

  /** @return a poller of the Infected v2 statistics */
  ListPoller<InfectedStats> infectedStatsPoller();

  /** @return a cache of the infected statistics, by player id */
  ListSync<Integer, InfectedStats> infectedStatsSync();

  /** @return the items active now ({@code startDate <= now < endDate}) */
  CompletableFuture<List<TemporaryItem>> getActiveItems();

  /** @return a poller of the items active now */
  ListPoller<TemporaryItem> activeItemsPoller();

  /**
   * The active items, by id; an item leaves the cache at its end (checked on each sync, on this machine's clock).
   *
   * @return a cache of the active items, by id
   */
  ListSync<String, TemporaryItem> activeItemsSync();

  /**
   * Applies the change and returns the whole world after it.
   *
   * @param update the change, from {@link WorldUpdate#of}
   * @return the world after the change; failed with {@link ApiException.Kind#NOT_FOUND} if none has that id
   */
  CompletableFuture<FreebuildWorld> updateWorld(WorldUpdate update);

  /** @return every parkour map */
  CompletableFuture<List<ParkourMap>> getAllMaps();

  /** @return a poller of the parkour maps */
  ListPoller<ParkourMap> mapsPoller();

  /** @return a cache of the parkour maps, by id */
  ListSync<Integer, ParkourMap> mapsSync();
}
