import { defineEntity, field } from "../fields/entity.js";

export const parkourMap = defineEntity({
  table: "parkour_maps",
  kind: "parkour_map",
  versioned: true,
  eventsSeenThrough: "/parkour/get-all-maps",
  fields: {
    id: field.id().describe("Map id"),
    name: field.text(64).describe("Map name", "Sky run"),
    enable: field.bool().describe("Whether the map is active"),
    spawnLocation: field.text(255, 0).nullable().describe("Spawn point: x, y, z, world, pitch, yaw", "12.5,80,-4.5,world,0,90"),
    difficulty: field.text(32).nullable().describe("Difficulty (seen: easy, hard)", "hard"),
  },
  component: { id: "ParkourMap" },
});
