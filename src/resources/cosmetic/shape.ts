import { z } from "zod";
import { bool, count, id, text } from "../../http/fields.js";
import type { Cosmetic } from "../../generated/prisma/client.js";

export const cosmeticSchema = z.strictObject({
  id,
  name: text(128),
  type: text(64),
  rarity: text(64),
  game: text(64),
  argumentFr: text(1000, 0),
  argumentEn: text(1000, 0),
  image: text(255, 0),
  lootbox: bool,
  price: count,
  description: text(1000, 0).nullable(),
  collection: text(128, 0).nullable(),
  render: text(255, 0).nullable(),
  permanent: bool,
});

export function toCosmetic(c: Cosmetic) {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    rarity: c.rarity,
    game: c.game,
    argumentFr: c.argumentFr,
    argumentEn: c.argumentEn,
    image: c.image,
    lootbox: c.lootbox,
    price: c.price,
    description: c.description,
    collection: c.collection,
    render: c.render,
    permanent: c.permanent,
  };
}
