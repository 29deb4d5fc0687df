import { defineRoute } from "../../http/route.js";
import { notImplemented } from "../not-implemented.js";
import { PLAYER_SUMMARY_SELECT, toPlayerSummary } from "./shape.js";

export const playerRoutes = [
  defineRoute({
    method: "GET",
    path: "/player/get-all-full-players-by-gradeId",
    summary: "All players of a grade, in full (shape G)",
    version: "2.0.0",
    callers: ["A", "B", "D"],
    handler: notImplemented,
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-all-players",
    summary: "All players, without their sensitive fields (shape N), ordered by id",
    version: "2.0.3",
    callers: ["A", "B", "C", "D"],
    async handler(_input, { deps }) {
      const players = await deps.db.prisma.player.findMany({ select: PLAYER_SUMMARY_SELECT, orderBy: { id: "asc" } });
      return players.map(toPlayerSummary);
    },
  }),
  defineRoute({
    method: "GET",
    path: "/player/get-player-by-nick",
    summary: "One player by pseudo or nickname (shape N)",
    callers: ["A", "B", "C", "D"],
    handler: notImplemented,
  }),
];
