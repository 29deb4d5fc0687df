package net.gamecommunity.api;

import java.util.concurrent.CompletableFuture;

/**
 * {@link CommunityApi}'s calls on cosmetics: read one, with its ETag, and change it safely with
 * {@link CosmeticUpdate} ({@code If-Match}).
 *
 * <p>A part of {@link CommunityApi}, which extends it (and is the only type that may): hold and fake a
 * {@code CommunityApi}, not this interface.
 */
public sealed interface CosmeticCalls permits CommunityApi {
  /**
   * @param id the cosmetic's id
   * @return the cosmetic; failed with {@link ApiException.Kind#NOT_FOUND} if none has that id
   */
  default CompletableFuture<Cosmetic> getCosmetic(int id) {
    return getCosmeticTagged(id).thenApply(Tagged::value);
  }

  /**
   * The cosmetic with its ETag, for a safe update ({@link CosmeticUpdate.Builder#ifMatch}).
   *
   * @param id the cosmetic's id
   * @return the cosmetic and its ETag; failed with {@link ApiException.Kind#NOT_FOUND} if none has that id
   */
  CompletableFuture<Tagged<Cosmetic>> getCosmeticTagged(int id);

  /**
   * Applies the change and returns the whole cosmetic after it, with its new ETag.
   *
   * @param update the change, from {@link CosmeticUpdate#of}
   * @return the cosmetic after the change; failed with {@link ApiException.Kind#PRECONDITION_FAILED}
   *     when its {@code ifMatch} ETag is stale, {@link ApiException.Kind#CONFLICT} ({@code DUPLICATE}) on a name taken
   */
  CompletableFuture<Tagged<Cosmetic>> updateCosmetic(CosmeticUpdate update);
}
