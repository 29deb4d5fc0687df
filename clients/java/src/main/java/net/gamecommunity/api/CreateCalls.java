package net.gamecommunity.api;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * {@link CommunityApi}'s writes that create: a form answer, a reward log, an API user. Each carries an
 * Idempotency-Key, new per call or your own, so that a retry (or a resend after a restart) is recorded once.
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface.
 */
public sealed interface CreateCalls permits CommunityApi {
  /**
   * Records a form answer, with a new Idempotency-Key (the same on each retry of this call).
   *
   * @param answer the form answer, from {@link NewFormAnswer#builder}
   * @return what was recorded
   */
  default CompletableFuture<Created<FormAnswer>> createForm(NewFormAnswer answer) {
    return createForm(answer, UUID.randomUUID().toString());
  }

  /**
   * With your own Idempotency-Key: keep it (e.g. in the plugin's storage) to resend the same request
   * after a restart; the service records it once within 24 hours. {@link DurableWrites} does that for you.
   *
   * @param answer the form answer
   * @param idempotencyKey 1 to 255 printable ASCII characters, unique per request (a UUID)
   * @return what was recorded (or, on a resend, what the first request recorded: {@link Created#replayed()})
   */
  CompletableFuture<Created<FormAnswer>> createForm(NewFormAnswer answer, String idempotencyKey);

  /**
   * Records a reward, with a new Idempotency-Key (the same on each retry of this call).
   *
   * @param log the reward
   * @return what was recorded; failed with {@link ApiException.Kind#CONFLICT}: {@code DUPLICATE} when
   *     the log names its moment and the same reward is recorded for that player at that second (without a moment,
   *     never), {@code REFERENCE_NOT_FOUND} when the player does not exist
   */
  default CompletableFuture<Created<RewardLog>> createRewardLog(NewRewardLog log) {
    return createRewardLog(log, UUID.randomUUID().toString());
  }

  /**
   * With your own Idempotency-Key, as {@link #createForm(NewFormAnswer, String)}.
   *
   * @param log the reward
   * @param idempotencyKey 1 to 255 printable ASCII characters, unique per request (a UUID)
   * @return what was recorded
   */
  CompletableFuture<Created<RewardLog>> createRewardLog(NewRewardLog log, String idempotencyKey);

  /**
   * Registers an API user and returns its key, shown only this once. A replay of this request (a retry
   * whose first attempt got through) is a {@link ApiException.Kind#CONFLICT} ({@code SECRET_NOT_REPLAYED}):
   * the key is not kept.
   *
   * @param user the user to register
   * @return the user and its key
   */
  default CompletableFuture<Created<RegisteredUser>> register(NewApiUser user) {
    return register(user, UUID.randomUUID().toString());
  }

  /**
   * With your own Idempotency-Key, as {@link #register(NewApiUser)}.
   *
   * @param user the user to register
   * @param idempotencyKey 1 to 255 printable ASCII characters, unique per request
   * @return the user and its key
   */
  CompletableFuture<Created<RegisteredUser>> register(NewApiUser user, String idempotencyKey);
}
