import { z } from "zod";
import { errors } from "../../errors.js";
import { int32, queryInt, queryText } from "../../http/fields.js";
import { defineRoute } from "../../http/route.js";
import { PLAYER_SUMMARY_SELECT, toPlayerFull, toPlayerSummary } from "./shape.js";

export const playerRoutes = [
  defineRoute({
    method: "GET",
    path: "/player/get-all-full-players-by-gradeId",
    summary: "All players of a grade, in full (shape G), ordered by id",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    query: z.strictObject({ gradeId: queryInt(int32) }),
    async handler({ query }, { deps }) {
      const players = await deps.db.prisma.player.findMany({ where: { gradeId: query.gradeId }, orderBy: { id: "asc" } });
      return players.map(toPlayerFull);
    },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-all-players",
    summary: "All players, without their sensitive fields (shape N), ordered by id",
    version: "2.0.3",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({}),
    async handler(_input, { deps }) {
      const players = await deps.db.prisma.player.findMany({ select: PLAYER_SUMMARY_SELECT, orderBy: { id: "asc" } });
      return players.map(toPlayerSummary);
    },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-player-by-nick",
    summary: "One player whose pseudo, or else nickname, equals nick regardless of case (shape N)",
    callers: ["A", "B", "C", "D"],
    query: z.strictObject({ nick: queryText(64) }),
    async handler({ query }, { deps }) {
      // pseudo and nickname are citext: plain equality is case-insensitive and uses their unique indexes.
      const matches = await deps.db.prisma.player.findMany({
        where: { OR: [{ pseudo: query.nick }, { nickname: query.nick }] },
        select: PLAYER_SUMMARY_SELECT,
        take: 2,
      });
      const nick = query.nick.toLowerCase();
      const player = matches.find((p) => p.pseudo.toLowerCase() === nick) ?? matches[0];
      if (!player) throw errors.notFound("Player");
      return toPlayerSummary(player);
    },
  }),
];
