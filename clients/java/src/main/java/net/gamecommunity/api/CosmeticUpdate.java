package net.gamecommunity.api;

import com.google.gson.JsonObject;

/**
 * A change to one cosmetic: the fields set here change, the others stay as they are;
 * {@code clearDescription()} (and collection, render) empties a field, the only ones that can be.
 * With {@link Builder#ifMatch} the change applies only if nobody changed the cosmetic since that ETag
 * was read; otherwise the call fails with {@link ApiException.Kind#PRECONDITION_FAILED}.
 *
 * <pre>{@code
 * CosmeticUpdate.of(3).price(450).clearDescription().ifMatch(tagged.etag()).build()
 * }</pre>
 */
public final class CosmeticUpdate {
  final int id;
  final JsonObject body;
  final String ifMatch;
  final boolean retry;

  private CosmeticUpdate(Builder b) {
    this.id = b.id;
    this.body = b.changes.body(b.id, "cosmetic");
    this.ifMatch = b.ifMatch;
    this.retry = b.retry;
  }

  /**
   * @param id the id of the cosmetic to change
   * @return a builder of the change: set at least one field
   */
  public static Builder of(int id) {
    return new Builder(id);
  }

  /** The fields to change, each set at most once; the others stay as they are. */
  public static final class Builder {
    private final int id;
    private final Changes changes = new Changes();
    private String ifMatch;
    private boolean retry;

    private Builder(int id) {
      this.id = id;
    }

    /**
     * @param name the new name, unique among cosmetics (else the update fails with {@code DUPLICATE})
     * @return this builder
     */
    public Builder name(String name) {
      changes.set("name", name);
      return this;
    }

    /**
     * @param type the new type
     * @return this builder
     */
    public Builder type(String type) {
      changes.set("type", type);
      return this;
    }

    /**
     * @param rarity the new rarity
     * @return this builder
     */
    public Builder rarity(String rarity) {
      changes.set("rarity", rarity);
      return this;
    }

    /**
     * @param game the game it now belongs to
     * @return this builder
     */
    public Builder game(String game) {
      changes.set("game", game);
      return this;
    }

    /**
     * @param text the new French description
     * @return this builder
     */
    public Builder argumentFr(String text) {
      changes.set("argumentFr", text);
      return this;
    }

    /**
     * @param text the new English description: {@code argument_EN} in the request, {@code argumentEn} in {@link Cosmetic}
     * @return this builder
     */
    public Builder argumentEn(String text) {
      changes.set("argument_EN", text);
      return this;
    }

    /**
     * @param path the new path of its image in the texture pack
     * @return this builder
     */
    public Builder image(String path) {
      changes.set("image", path);
      return this;
    }

    /**
     * @param lootbox whether it can come from lootboxes
     * @return this builder
     */
    public Builder lootbox(boolean lootbox) {
      changes.set("lootbox", lootbox);
      return this;
    }

    /**
     * @param price the new shop price, in credits
     * @return this builder
     */
    public Builder price(int price) {
      changes.set("price", price);
      return this;
    }

    /**
     * @param permanent whether it is kept for good once obtained
     * @return this builder
     */
    public Builder permanent(boolean permanent) {
      changes.set("permanent", permanent);
      return this;
    }

    /**
     * @param text the new description (not the text {@code "null"}: clear it with {@link #clearDescription()})
     * @return this builder
     */
    public Builder description(String text) {
      changes.setClearable("description", text);
      return this;
    }

    /**
     * Empties the description (sent as null).
     *
     * @return this builder
     */
    public Builder clearDescription() {
      changes.clear("description");
      return this;
    }

    /**
     * @param text the collection it now belongs to (clear it with {@link #clearCollection()})
     * @return this builder
     */
    public Builder collection(String text) {
      changes.setClearable("collection", text);
      return this;
    }

    /**
     * Empties the collection (sent as null).
     *
     * @return this builder
     */
    public Builder clearCollection() {
      changes.clear("collection");
      return this;
    }

    /**
     * @param text the new 3D display (clear it with {@link #clearRender()})
     * @return this builder
     */
    public Builder render(String text) {
      changes.setClearable("render", text);
      return this;
    }

    /**
     * Empties the render (sent as null).
     *
     * @return this builder
     */
    public Builder clearRender() {
      changes.clear("render");
      return this;
    }

    /**
     * Apply only if the cosmetic is still at this ETag (from {@code getCosmeticTagged} or a previous update).
     *
     * @param etag the ETag the cosmetic was read with
     * @return this builder
     */
    public Builder ifMatch(String etag) {
      this.ifMatch = java.util.Objects.requireNonNull(etag, "etag");
      return this;
    }

    /**
     * Send it again after a timeout, a lost connection, a 503 or a 429. Off by default: if an attempt was
     * applied but its answer lost, the retry applies it again (harmless for plain values; with
     * {@link #ifMatch} the retry then fails with 412, because the first attempt changed the version).
     *
     * @return this builder
     */
    public Builder retryOnFailure() {
      this.retry = true;
      return this;
    }

    /**
     * @return the change
     * @throws IllegalStateException when no field was set
     */
    public CosmeticUpdate build() {
      return new CosmeticUpdate(this);
    }
  }
}
