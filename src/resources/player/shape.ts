import { z } from "zod";
import { bool, count, formatTimestamp, id, int32, out, text, timestamp } from "../../http/fields.js";
import type { Player } from "../../generated/prisma/client.js";

/**
 * Player shapes. G (get-all-full-players-by-gradeId) is the full record; N
 * (get-player-by-nick, and get-all-players per the decisions) leaves out the
 * sensitive token, ip, firstConnection and totalTimeConnection. The language
 * field is spelled `language` everywhere.
 */
export const playerFullSchema = z.strictObject({
  id,
  pseudo: text(64),
  token: text(255, 0),
  credit: count,
  gradeId: int32,
  modStatus: bool,
  staff: bool,
  alert: bool,
  nickname: text(64).nullable(),
  firstConnection: timestamp,
  totalTimeConnection: z.number("expected a number").nonnegative("expected 0 or more").finite(),
  status: text(32),
  ip: text(45, 0),
  chatId: text(64).nullable(),
  language: text(8),
  streamerPoint: count,
  tag: text(64).nullable(),
  color: text(32).nullable(),
  highclub: bool,
  vote: count,
});

export const PLAYER_SUMMARY_SELECT = {
  id: true,
  pseudo: true,
  credit: true,
  gradeId: true,
  modStatus: true,
  staff: true,
  alert: true,
  nickname: true,
  status: true,
  chatId: true,
  language: true,
  streamerPoint: true,
  tag: true,
  color: true,
  highclub: true,
  vote: true,
} as const;

type PlayerSummaryRow = Pick<Player, keyof typeof PLAYER_SUMMARY_SELECT>;

/** Shape N. */
export function toPlayerSummary(p: PlayerSummaryRow) {
  return {
    id: p.id,
    pseudo: p.pseudo,
    credit: p.credit,
    gradeId: p.gradeId,
    modStatus: p.modStatus,
    staff: p.staff,
    alert: p.alert,
    nickname: p.nickname,
    status: p.status,
    chatId: p.chatId,
    language: p.language,
    streamerPoint: p.streamerPoint,
    tag: p.tag,
    color: p.color,
    highclub: p.highclub,
    vote: p.vote,
  };
}

/** Shape G. */
export function toPlayerFull(p: Player) {
  return {
    id: p.id,
    pseudo: p.pseudo,
    token: p.token,
    credit: p.credit,
    gradeId: p.gradeId,
    modStatus: p.modStatus,
    staff: p.staff,
    alert: p.alert,
    nickname: p.nickname,
    firstConnection: formatTimestamp(p.firstConnection),
    totalTimeConnection: p.totalTimeConnection,
    status: p.status,
    ip: p.ip,
    chatId: p.chatId,
    language: p.language,
    streamerPoint: p.streamerPoint,
    tag: p.tag,
    color: p.color,
    highclub: p.highclub,
    vote: p.vote,
  };
}

const summaryFields = {
  id: out.id("Player id"),
  pseudo: out.text("Pseudo, unique regardless of case", "Steve"),
  credit: out.count("Credits"),
  gradeId: out.int32("Id of the player's grade"),
  modStatus: out.bool("Whether the player is in moderator mode"),
  staff: out.bool("Whether the player belongs to a staff"),
  alert: out.bool("Whether the player wants to see staff-only messages"),
  nickname: out.nullableText("Nickname, unique regardless of case", "Stevie"),
  status: out.text("Connection status (seen: Online, Offline)", "Online"),
  chatId: out.nullableText("Id on a linked chat account"),
  language: out.text("Language (seen: FR, EN)", "FR"),
  streamerPoint: out.count("Streaming points"),
  tag: out.nullableText("Custom grade label"),
  color: out.nullableText("Custom colour"),
  highclub: out.bool("Whether the player has the highclub"),
  vote: out.count("Vote points"),
};

/** Shape N, as written. */
export const playerSummaryResponse = z.strictObject(summaryFields).meta({
  id: "PlayerSummary",
  description: "A player without the sensitive token, ip, firstConnection and totalTimeConnection",
});

/** Shape G, as written. */
export const playerFullResponse = z
  .strictObject({
    id: summaryFields.id,
    pseudo: summaryFields.pseudo,
    token: out.text("Player's token (sensitive)"),
    credit: summaryFields.credit,
    gradeId: summaryFields.gradeId,
    modStatus: summaryFields.modStatus,
    staff: summaryFields.staff,
    alert: summaryFields.alert,
    nickname: summaryFields.nickname,
    firstConnection: out.timestamp("First connection"),
    totalTimeConnection: z.number().min(0).meta({ description: "Time spent on the server (the game plugin's unit)" }),
    status: summaryFields.status,
    ip: out.text("Player's IP address (sensitive)"),
    chatId: summaryFields.chatId,
    language: summaryFields.language,
    streamerPoint: summaryFields.streamerPoint,
    tag: summaryFields.tag,
    color: summaryFields.color,
    highclub: summaryFields.highclub,
    vote: summaryFields.vote,
  })
  .meta({ id: "PlayerFull", description: "A player with every field, including the sensitive ones" });
