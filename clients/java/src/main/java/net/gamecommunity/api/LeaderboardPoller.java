package net.gamecommunity.api;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Polls one leaderboard's top with the ETag of the last board it delivered (If-None-Match): while no statistic,
 * pseudo or period changed, the service answers an empty 304 and nothing is delivered, so a hologram is redrawn only
 * when its board changed. {@link LeaderboardCalls#leaderboardPoller} makes one.
 *
 * <pre>{@code
 * ListPoller.Subscription hologram = api.leaderboardPoller(Board.current(Statistic.KILL, PeriodKind.WEEK), 10)
 *     .start(Duration.ofSeconds(30), board -> redraw(board.entries()), e -> getLogger().warning(e.getMessage()));
 * }</pre>
 */
public final class LeaderboardPoller {
  private final EtagPolling<Leaderboard> polling;

  LeaderboardPoller(HttpCommunityApi api, Map<String, String> query) {
    this.polling = new EtagPolling<>(api, Route.LEADERBOARD, query, "LeaderboardPoller");
  }

  /** @return one poll: the board if it changed since the last one delivered (or on the first poll), else empty */
  public CompletableFuture<Optional<Leaderboard>> poll() {
    return polling.poll();
  }

  /** @return the ETag of the last board delivered, if any */
  public Optional<String> etag() {
    return polling.etag();
  }

  /**
   * Polls now, then {@code every} after each poll ends, until the subscription or the client is closed, as
   * {@link ListPoller#start} does: {@code onChange} gets each changed board, {@code onError} each failed poll
   * (polling goes on), on the callback executor when the builder was given one; a {@code Retry-After} and a spent
   * rate budget are waited for.
   *
   * @param every the wait between the end of a poll and the next one (a board that changes by the minute needs no
   *     faster one)
   * @param onChange gets each changed board
   * @param onError gets each failed poll
   * @return the running loop: close it to stop
   * @throws NullPointerException when {@code every}, {@code onChange} or {@code onError} is null
   */
  public ListPoller.Subscription start(Duration every, Consumer<Leaderboard> onChange, Consumer<ApiException> onError) {
    return polling.start(every, onChange, onError);
  }
}
