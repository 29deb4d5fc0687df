import { z } from "zod";
import { defineEntity, field } from "../fields/entity.js";

/** Gamerule flags: true/false, or the texts "true"/"false" as older plugins send them. Written as booleans. */
const gameruleFlag = z
  .union([z.boolean(), z.enum(["true", "false"])], { error: 'expected true, false, "true" or "false"' })
  .transform((v) => v === true || v === "true");

export const world = defineEntity({
  table: "worlds",
  kind: "world",
  fields: {
    id: field.id().describe("World id"),
    name: field.text(64).describe("World name", "Nether base"),
    ownerId: field.id().references("players").describe("Id of the owning player"),
    type: field.text(32).describe("World type", "NETHER"),
    state: field.text(32).describe("Whether the world is loaded", "unLoaded"),
    lastUsed: field.timestamp().describe("Last moment someone was on it"),
    status: field.text(32).describe("Whether the world is public", "PUBLIC"),
    spawnLocation: field.text(255, 0).nullable().describe("Spawn position, free text of coordinates", "0,64,0"),
    gameruleRandomTickSpeed: field.count().describe("Random tick speed"),
    gameruleDaylightCycle: field.custom(gameruleFlag, z.boolean()).describe("Whether a day/night cycle exists"),
    gamerulePvp: field.custom(gameruleFlag, z.boolean()).describe("Whether PvP is enabled"),
    gamerulePlayerDamage: field.custom(gameruleFlag, z.boolean()).describe("Whether players can take damage"),
    tag: field.text(64, 0).nullable().describe("World tag"),
  },
  component: { id: "World" },
});
