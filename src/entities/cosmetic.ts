import { defineEntity, field } from "../fields/entity.js";

export const cosmetic = defineEntity({
  table: "cosmetics",
  kind: "cosmetic",
  eventsSeenThrough: "/cosmetic/get-cosmetic",
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
