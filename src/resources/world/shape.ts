import { z } from "zod";
import { count, formatTimestamp, id, out, text, timestamp } from "../../http/fields.js";
import type { World } from "../../generated/prisma/client.js";

/** Gamerule flags: true/false, or the texts "true"/"false" as older plugins send them. Written as booleans. */
export const flag = z
  .union([z.boolean(), z.enum(["true", "false"])], { error: 'expected true, false, "true" or "false"' })
  .transform((v) => v === true || v === "true");

export const worldSchema = z.strictObject({
  id,
  name: text(64),
  ownerId: id,
  type: text(32),
  state: text(32),
  lastUsed: timestamp,
  status: text(32),
  spawnLocation: text(255, 0).nullable(),
  gameruleRandomTickSpeed: count,
  gameruleDaylightCycle: flag,
  gamerulePvp: flag,
  gamerulePlayerDamage: flag,
  tag: text(64, 0).nullable(),
});

export function toWorld(w: World) {
  return {
    id: w.id,
    name: w.name,
    ownerId: w.ownerId,
    type: w.type,
    state: w.state,
    lastUsed: formatTimestamp(w.lastUsed),
    status: w.status,
    spawnLocation: w.spawnLocation,
    gameruleRandomTickSpeed: w.gameruleRandomTickSpeed,
    gameruleDaylightCycle: w.gameruleDaylightCycle,
    gamerulePvp: w.gamerulePvp,
    gamerulePlayerDamage: w.gamerulePlayerDamage,
    tag: w.tag,
  };
}

export const worldResponse = z
  .strictObject({
    id: out.id("World id"),
    name: out.text("World name", "Nether base"),
    ownerId: out.id("Id of the owning player"),
    type: out.text("World type", "NETHER"),
    state: out.text("Whether the world is loaded", "unLoaded"),
    lastUsed: out.timestamp("Last moment someone was on it"),
    status: out.text("Whether the world is public", "PUBLIC"),
    spawnLocation: out.nullableText("Spawn position, free text of coordinates", "0,64,0"),
    gameruleRandomTickSpeed: out.count("Random tick speed"),
    gameruleDaylightCycle: out.bool("Whether a day/night cycle exists"),
    gamerulePvp: out.bool("Whether PvP is enabled"),
    gamerulePlayerDamage: out.bool("Whether players can take damage"),
    tag: out.nullableText("World tag"),
  })
  .meta({ id: "World" });
