import { z } from "zod";
import { errors } from "../../errors.js";
import { int32, queryInt, queryText } from "../../http/fields.js";
import { defineRoute, JsonText } from "../../http/route.js";
import { tableVersion } from "../../db/versions.js";
import { allPlayersJson, playersByGradeJson, playersByNick } from "./queries.js";
import { playerFullResponse, playerSummaryResponse, toPlayerSummary } from "./shape.js";

export const playerRoutes = [
  defineRoute({
    method: "GET",
    path: "/player/get-all-full-players-by-gradeId",
    summary: "All players of a grade, in full",
    description:
      "Every player whose gradeId is the one given, with every field including the sensitive token, ip, " +
      "firstConnection and totalTimeConnection (PlayerFull). Ordered by id; [] when none.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({ gradeId: queryInt(int32).meta({ description: "The grade's id", example: 2 }) }),
    response: z.array(playerFullResponse),
    etag: async ({ query }, { db }) => `players-v${await tableVersion(db, "players")}-g${query.gradeId}`,
    heavy: true,
    async handler({ query }, { db }) {
      return new JsonText(await playersByGradeJson(db, query.gradeId));
    },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-all-players",
    summary: "All players",
    description:
      "Every player as a PlayerSummary: without token, ip, firstConnection and totalTimeConnection, which only " +
      "get-all-full-players-by-gradeId returns. Ordered by id; [] when none.",
    version: "2.0.3",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({}),
    response: z.array(playerSummaryResponse),
    etag: async (_input, { db }) => `players-v${await tableVersion(db, "players")}`,
    heavy: true,
    async handler(_input, { db }) {
      return new JsonText(await allPlayersJson(db));
    },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-player-by-nick",
    summary: "One player by pseudo or nickname",
    description:
      "The player whose pseudo, or else nickname, equals nick regardless of case (PlayerSummary). When one player's " +
      "pseudo and another's nickname both match, the pseudo wins. _ and % are plain characters.",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({ nick: queryText(64).meta({ description: "A pseudo or a nickname", example: "Stevie" }) }),
    response: playerSummaryResponse,
    errors: { 404: "No player has this pseudo or nickname: `Player not found`." },
    async handler({ query }, { db }) {
      const matches = await playersByNick(db, query.nick);
      const nick = query.nick.toLowerCase();
      const player = matches.find((p) => p.pseudo.toLowerCase() === nick) ?? matches[0];
      if (!player) throw errors.notFound("Player");
      return toPlayerSummary(player);
    },
  }),
];
