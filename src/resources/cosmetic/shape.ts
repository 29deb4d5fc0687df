import { z } from "zod";
import { bool, count, id, INT32_MAX, out, text } from "../../http/fields.js";
import type { IfMatch } from "../../http/if-match.js";
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

export const cosmeticResponse = z
  .strictObject({
    id: out.id("Cosmetic id"),
    name: out.text("Name, unique", "Halo"),
    type: out.text("Type", "hat"),
    rarity: out.text("Rarity", "rare"),
    game: out.text("Game it belongs to", "lobby"),
    argumentFr: out.text("French description"),
    argumentEn: out.text("English description (argument_EN in updates)"),
    image: out.text("Path of the image in the texture pack"),
    lootbox: out.bool("Whether it can come from lootboxes"),
    price: out.count("Shop price"),
    description: out.nullableText("Description"),
    collection: out.nullableText("Collection"),
    render: out.nullableText("3D display"),
    permanent: out.bool("Whether it is permanent"),
  })
  .meta({ id: "Cosmetic" });

/** The strong ETag of one cosmetic at one version (quoted by the registrar). */
export function cosmeticEtag(c: Pick<Cosmetic, "id" | "version">): string {
  return `cosmetic-${c.id}-v${c.version}`;
}

/**
 * The versions of cosmetic `id` that If-Match names: undefined for `*` (any
 * version). Strong comparison is exact: a tag of another cosmetic, or written
 * differently (`v01`), names none.
 */
export function versionsNamed(ifMatch: IfMatch, id: number): number[] | undefined {
  if (ifMatch.any) return undefined;
  return ifMatch.strongTags.flatMap((tag) => {
    const m = /^cosmetic-([1-9]\d{0,9})-v([1-9]\d{0,9})$/.exec(tag);
    if (!m || Number(m[1]) !== id || Number(m[2]) > INT32_MAX) return [];
    return [Number(m[2])];
  });
}
