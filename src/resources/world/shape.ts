import { z } from "zod";
import { count, formatTimestamp, id, text, timestamp } from "../../http/fields.js";
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
