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

  public static Builder of(int id) {
    return new Builder(id);
  }

  public static final class Builder {
    private final int id;
    private final Changes changes = new Changes();
    private boolean retry;

    private Builder(int id) {
      this.id = id;
    }

    public Builder name(String name) { changes.set("name", name); return this; }
    public Builder ownerId(int playerId) { changes.set("ownerId", playerId); return this; }
    public Builder type(String type) { changes.set("type", type); return this; }
    public Builder state(String state) { changes.set("state", state); return this; }
    /** Sent to the second (the service keeps whole seconds). */
    public Builder lastUsed(Instant lastUsed) { changes.set("lastUsed", lastUsed); return this; }
    public Builder status(String status) { changes.set("status", status); return this; }
    public Builder gameruleRandomTickSpeed(int speed) { changes.set("gameruleRandomTickSpeed", speed); return this; }
    public Builder gameruleDaylightCycle(boolean on) { changes.set("gameruleDaylightCycle", on); return this; }
    public Builder gamerulePvp(boolean on) { changes.set("gamerulePvp", on); return this; }
    public Builder gamerulePlayerDamage(boolean on) { changes.set("gamerulePlayerDamage", on); return this; }
    public Builder spawnLocation(String location) { changes.setClearable("spawnLocation", location); return this; }
    public Builder clearSpawnLocation() { changes.clear("spawnLocation"); return this; }
    public Builder tag(String tag) { changes.setClearable("tag", tag); return this; }
    public Builder clearTag() { changes.clear("tag"); return this; }

    /** Send it again after a timeout, a lost connection, a 503 or a 429 (off by default; see {@link CosmeticUpdate.Builder#retryOnFailure}). */
    public Builder retryOnFailure() {
      this.retry = true;
      return this;
    }

    public WorldUpdate build() {
      return new WorldUpdate(this);
    }
  }
}
