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

  public static Builder of(int id) {
    return new Builder(id);
  }

  public static final class Builder {
    private final int id;
    private final Changes changes = new Changes();
    private String ifMatch;
    private boolean retry;

    private Builder(int id) {
      this.id = id;
    }

    public Builder name(String name) { changes.set("name", name); return this; }
    public Builder type(String type) { changes.set("type", type); return this; }
    public Builder rarity(String rarity) { changes.set("rarity", rarity); return this; }
    public Builder game(String game) { changes.set("game", game); return this; }
    public Builder argumentFr(String text) { changes.set("argumentFr", text); return this; }
    /** The English description: {@code argument_EN} in the request, {@code argumentEn} in {@link Cosmetic}. */
    public Builder argumentEn(String text) { changes.set("argument_EN", text); return this; }
    public Builder image(String path) { changes.set("image", path); return this; }
    public Builder lootbox(boolean lootbox) { changes.set("lootbox", lootbox); return this; }
    public Builder price(int price) { changes.set("price", price); return this; }
    public Builder permanent(boolean permanent) { changes.set("permanent", permanent); return this; }
    public Builder description(String text) { changes.setClearable("description", text); return this; }
    public Builder clearDescription() { changes.clear("description"); return this; }
    public Builder collection(String text) { changes.setClearable("collection", text); return this; }
    public Builder clearCollection() { changes.clear("collection"); return this; }
    public Builder render(String text) { changes.setClearable("render", text); return this; }
    public Builder clearRender() { changes.clear("render"); return this; }

    /** Apply only if the cosmetic is still at this ETag (from {@code getCosmeticTagged} or a previous update). */
    public Builder ifMatch(String etag) {
      this.ifMatch = java.util.Objects.requireNonNull(etag, "etag");
      return this;
    }

    /**
     * Send it again after a timeout, a lost connection, a 503 or a 429. Off by default: if an attempt was
     * applied but its answer lost, the retry applies it again (harmless for plain values; with
     * {@link #ifMatch} the retry then fails with 412, because the first attempt changed the version).
     */
    public Builder retryOnFailure() {
      this.retry = true;
      return this;
    }

    public CosmeticUpdate build() {
      return new CosmeticUpdate(this);
    }
  }
}
