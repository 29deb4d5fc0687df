import { z } from "zod";
import { errors } from "../../errors.js";
import { int32 } from "../../fields/rules.js";
import { queryInt, queryText } from "../../http/query-params.js";
import { defineRoute, JsonText } from "../../http/route.js";
import { tableVersion } from "../../db/versions.js";
import { allPlayersJson, playersByGradeJson, playersByNick } from "./queries.js";
import { player, playerSummary } from "./entity.js";

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
    response: z.array(player.full.response),
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
    response: z.array(playerSummary.response),
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
    response: playerSummary.response,
    errors: { 404: "No player has this pseudo or nickname: `Player not found`." },
    async handler({ query }, { db }) {
      const matches = await playersByNick(db, query.nick);
      const nick = query.nick.toLowerCase();
      const found = matches.find((p) => p.pseudo.toLowerCase() === nick) ?? matches[0];
      if (!found) throw errors.notFound("Player");
      return found;
    },
  }),
];
