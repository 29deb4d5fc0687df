package net.gamecommunity.api;

import java.util.Collection;

/**
 * {@link CommunityApi}'s event stream: its writes as they commit (GET /api/events).
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface.
 */
public sealed interface EventCalls permits CommunityApi {
  /**
   * The API's writes as they commit (GET /api/events), to {@code listener} on the client's callback
   * executor (or its own executor without one: see {@link EventListener}), in order; reconnects and
   * resumes by itself, waiting out Retry-After (see {@link EventSubscription}). Closed by
   * {@link EventSubscription#close()} or by {@link CommunityApi#close()}.
   *
   * @param types the event types ({@code reward_log.created}, …); empty for every type this API user may see
   * @param listener called with each event, and with failures
   * @return the running subscription
   * @throws NullPointerException when {@code types} or {@code listener} is null
   * @throws IllegalStateException when this client is closed
   */
  default EventSubscription subscribe(Collection<String> types, EventListener listener) {
    return subscribe(types, null, listener);
  }

  /**
   * The same, resuming after the event of id {@code lastEventId} (the last one handled before a restart).
   *
   * @param types the event types; empty for every type this API user may see
   * @param lastEventId the id of the last event handled ({@link EventSubscription#lastEventId()}), or null to start from now
   * @param listener called with each event, and with failures
   * @return the running subscription
   * @throws NullPointerException when {@code types} or {@code listener} is null
   * @throws IllegalStateException when this client is closed
   */
  EventSubscription subscribe(Collection<String> types, @Nullable String lastEventId, EventListener listener);
}
