package net.gamecommunity.api;

import com.google.gson.JsonObject;
import java.time.Instant;

/**
 * A change to one freebuild world: the fields set here change, the others stay as they are;
 * {@code clearSpawnLocation()} and {@code clearTag()} empty the only fields that can be.
 *
 * <pre>{@code
 * WorldUpdate.of(4).state("loaded").gamerulePvp(false).clearTag().build()
 * }</pre>
 */
public final class WorldUpdate {
  final int id;
  final JsonObject body;
  final boolean retry;

  private WorldUpdate(Builder b) {
    this.id = b.id;
    this.body = b.changes.body(b.id, "world");
    this.retry = b.retry;
  }

  /**
   * @param id the id of the world to change
   * @return a builder of the change: set at least one field
   */
  public static Builder of(int id) {
    return new Builder(id);
  }

  /** The fields to change, each set at most once; the others stay as they are. */
  public static final class Builder {
    private final int id;
    private final Changes changes = new Changes();
    private boolean retry;

    private Builder(int id) {
      this.id = id;
    }

    /**
     * @param name the new name
     * @return this builder
     */
    public Builder name(String name) {
      changes.set("name", name);
      return this;
    }

    /**
     * @param playerId the id of the player who now owns it
     * @return this builder
     */
    public Builder ownerId(int playerId) {
      changes.set("ownerId", playerId);
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
     * @param state whether it is loaded, as the game writes it (such as {@code loaded}, {@code unLoaded})
     * @return this builder
     */
    public Builder state(String state) {
      changes.set("state", state);
      return this;
    }

    /**
     * @param lastUsed the last moment someone was on it, sent to the second (the service keeps whole seconds)
     * @return this builder
     */
    public Builder lastUsed(Instant lastUsed) {
      changes.set("lastUsed", lastUsed);
      return this;
    }

    /**
     * @param status whether it is public, as the game writes it
     * @return this builder
     */
    public Builder status(String status) {
      changes.set("status", status);
      return this;
    }

    /**
     * @param speed the random tick speed game rule
     * @return this builder
     */
    public Builder gameruleRandomTickSpeed(int speed) {
      changes.set("gameruleRandomTickSpeed", speed);
      return this;
    }

    /**
     * @param on whether days and nights pass
     * @return this builder
     */
    public Builder gameruleDaylightCycle(boolean on) {
      changes.set("gameruleDaylightCycle", on);
      return this;
    }

    /**
     * @param on whether players may fight each other
     * @return this builder
     */
    public Builder gamerulePvp(boolean on) {
      changes.set("gamerulePvp", on);
      return this;
    }

    /**
     * @param on whether players take damage
     * @return this builder
     */
    public Builder gamerulePlayerDamage(boolean on) {
      changes.set("gamerulePlayerDamage", on);
      return this;
    }

    /**
     * @param location the new spawn position, a free text of coordinates (clear it with {@link #clearSpawnLocation()})
     * @return this builder
     */
    public Builder spawnLocation(String location) {
      changes.setClearable("spawnLocation", location);
      return this;
    }

    /**
     * Empties the spawnLocation (sent as null).
     *
     * @return this builder
     */
    public Builder clearSpawnLocation() {
      changes.clear("spawnLocation");
      return this;
    }

    /**
     * @param tag the new tag (clear it with {@link #clearTag()})
     * @return this builder
     */
    public Builder tag(String tag) {
      changes.setClearable("tag", tag);
      return this;
    }

    /**
     * Empties the tag (sent as null).
     *
     * @return this builder
     */
    public Builder clearTag() {
      changes.clear("tag");
      return this;
    }

    /**
     * Send it again after a timeout, a lost connection, a 503 or a 429 (off by default; see {@link CosmeticUpdate.Builder#retryOnFailure}).
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
    public WorldUpdate build() {
      return new WorldUpdate(this);
    }
  }
}
