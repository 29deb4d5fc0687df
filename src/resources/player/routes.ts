import { z } from "zod";
import { errors } from "../../core/errors.js";
import { tableVersion } from "../../db/versions.js";
import { player, playerSummary } from "../../entities/player.js";
import { listed } from "../../fields/entity.js";
import { queryInt, queryText } from "../../fields/query-params.js";
import { int32 } from "../../fields/rules.js";
import { Prisma } from "../../generated/prisma/client.js";
import { defineRoute } from "../../http/route.js";
import { allPlayers, fullPlayers, playerByNick } from "./queries.js";

export const playerRoutes = [
  defineRoute({
    method: "GET",
    path: "/player/get-all-full-players-by-gradeId",
    summary: "All players of a grade, in full",
    description:
      `Every player whose gradeId is the one given, with every field including the sensitive ${listed(player.sensitive)} ` +
      "(PlayerFull). Ordered by id; [] when none.",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({ gradeId: queryInt(int32).meta({ description: "The grade's id", example: 2 }) }),
    response: z.array(player.full.response),
    etag: async ({ query }, { db }) => `players-v${await tableVersion(db, player)}-g${query.gradeId}`,
    heavy: true,
    list: { source: fullPlayers, where: ({ query }) => Prisma.sql`t."gradeId" = ${query.gradeId}` },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-all-players",
    summary: "All players",
    description:
      `Every player as a PlayerSummary: without ${listed(player.sensitive)}, which only ` +
      "get-all-full-players-by-gradeId returns. Ordered by id; [] when none.",
    version: "2.0.3",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({}),
    response: z.array(playerSummary.response),
    etag: async (_input, { db }) => `players-v${await tableVersion(db, player)}`,
    heavy: true,
    list: { source: allPlayers },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-player-by-nick",
    summary: "One player by name",
    description:
      "The player whose pseudo, or else nickname, equals nick regardless of case (PlayerSummary): when one player's pseudo and another's nickname both match, the pseudo wins. " +
      "With match=pseudo, the pseudo only: a game server's join path knows the Minecraft name, never the display nickname. _ and % are plain characters.",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({
      nick: queryText(64).meta({ description: "The name to look up", example: "Stevie" }),
      match: z
        .enum(["any", "pseudo"], { error: "expected any or pseudo" })
        .optional()
        .meta({ description: "What nick is compared with: any (the default), the pseudo or else the nickname; pseudo, the pseudo only", example: "pseudo" }),
    }),
    response: playerSummary.response,
    errors: { 404: "No player has this name: `Player not found`." },
    async handler({ query }, { db }) {
      const found = await playerByNick(db, query.nick, query.match === "pseudo");
      if (!found) throw errors.notFound("Player");
      return found;
    },
  }),
];
