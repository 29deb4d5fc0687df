import { z } from "zod";
import { bool, id, out, text } from "../../http/fields.js";
import type { ParkourMap } from "../../generated/prisma/client.js";

export const parkourMapSchema = z.strictObject({
  id,
  name: text(64),
  enable: bool,
  spawnLocation: text(255, 0).nullable(),
  difficulty: text(32).nullable(),
});

export function toParkourMap(m: ParkourMap) {
  return { id: m.id, name: m.name, enable: m.enable, spawnLocation: m.spawnLocation, difficulty: m.difficulty };
}

export const parkourMapResponse = z
  .strictObject({
    id: out.id("Map id"),
    name: out.text("Map name", "Sky run"),
    enable: out.bool("Whether the map is active"),
    spawnLocation: out.nullableText("Spawn point: x, y, z, world, pitch, yaw", "12.5,80,-4.5,world,0,90"),
    difficulty: out.nullableText("Difficulty (seen: easy, hard)", "hard"),
  })
  .meta({ id: "ParkourMap" });
