import { defineEntity, field } from "../../fields/entity.js";
import { INT32_MAX } from "../../fields/rules.js";
import type { IfMatch } from "../../http/if-match.js";
import type { Cosmetic } from "../../generated/prisma/client.js";

export const cosmetic = defineEntity({
  table: "cosmetics",
  fields: {
    id: field.id().describe("Cosmetic id"),
    name: field.text(128).unique({ subject: "Cosmetic name" }).describe("Name, unique", "Halo"),
    type: field.text(64).describe("Type", "hat"),
    rarity: field.text(64).describe("Rarity", "rare"),
    game: field.text(64).describe("Game it belongs to", "lobby"),
    argumentFr: field.text(1000, 0).describe("French description"),
    argumentEn: field.text(1000, 0).alsoNamed("argument_EN").describe("English description (argument_EN in updates)"),
    image: field.text(255, 0).describe("Path of the image in the texture pack"),
    lootbox: field.bool().describe("Whether it can come from lootboxes"),
    price: field.count().describe("Shop price"),
    description: field.text(1000, 0).nullable().describe("Description"),
    collection: field.text(128, 0).nullable().describe("Collection"),
    render: field.text(255, 0).nullable().describe("3D display"),
    permanent: field.bool().describe("Whether it is permanent"),
  },
  component: { id: "Cosmetic" },
});

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
