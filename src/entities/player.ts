import { z } from "zod";
import { defineEntity, field } from "../fields/entity.js";

/** The language field is spelled `language` everywhere. */
export const player = defineEntity({
  table: "players",
  kind: "player",
  versioned: true,
  eventsSeenThrough: "/player/get-all-full-players-by-gradeId",
  fields: {
    id: field.id().describe("Player id"),
    pseudo: field.text(64).caseInsensitive().unique().describe("Pseudo, unique regardless of case", "Steve"),
    token: field.text(255, 0).sensitive().describe("Player's token (sensitive)"),
    credit: field.count().describe("Credits"),
    gradeId: field.int32().describe("Id of the player's grade"),
    modStatus: field.bool().describe("Whether the player is in moderator mode"),
    staff: field.bool().describe("Whether the player belongs to a staff"),
    alert: field.bool().describe("Whether the player wants to see staff-only messages"),
    nickname: field.text(64).nullable().caseInsensitive().unique().describe("Nickname, unique regardless of case", "Stevie"),
    firstConnection: field.timestamp().sensitive().describe("First connection"),
    totalTimeConnection: field
      .custom(z.number("expected a number").nonnegative("expected 0 or more").finite(), z.number().min(0))
      .sensitive()
      .describe("Time spent on the server (the game plugin's unit)"),
    status: field.text(32).describe("Connection status (seen: Online, Offline)", "Online"),
    ip: field.text(45, 0).sensitive().describe("Player's IP address (sensitive)"),
    chatId: field.text(64).nullable().describe("Id on a linked chat account"),
    language: field.text(8).describe("Language (seen: FR, EN)", "FR"),
    streamerPoint: field.count().describe("Streaming points"),
    tag: field.text(64).nullable().describe("Custom grade label"),
    color: field.text(32).nullable().describe("Custom colour"),
    highclub: field.bool().describe("Whether the player has the highclub"),
    vote: field.count().describe("Vote points"),
  },
  component: { id: "PlayerFull", description: "A player with every field, including the sensitive ones" },
  summaryComponent: { id: "PlayerSummary", description: (omitted) => `A player without the sensitive ${omitted}` },
  // When a write last set `ip`: PLAYER_IP_RETAIN_DAYS counts from it (migration 20261203080000_retention).
  bookkeeping: ["ipSetAt"],
});

export const playerSummary = player.summary!;
