import { z } from "zod";
import { bool, id, text } from "../../http/fields.js";
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
