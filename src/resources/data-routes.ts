import type { RouteSpec } from "../http/route.js";
import { cosmeticRoutes } from "./cosmetic/routes.js";
import { formRoutes } from "./form/routes.js";
import { infectedRoutes } from "./infected/routes.js";
import { inscriptionRoutes } from "./inscription/routes.js";
import { leaderboardRoutes } from "./leaderboard/routes.js";
import { parkourRoutes } from "./parkour/routes.js";
import { playerRoutes } from "./player/routes.js";
import { rewardLogRoutes } from "./reward-log/routes.js";
import { temporaryItemRoutes } from "./temporary-item/routes.js";
import { worldRoutes } from "./world/routes.js";

/** The twelve routes of the spec and the leaderboards: the data the event stream's types follow (resources/events/visibility.ts). */
export const dataRoutes: readonly RouteSpec[] = [
  ...playerRoutes,
  ...cosmeticRoutes,
  ...formRoutes,
  ...infectedRoutes,
  ...leaderboardRoutes,
  ...temporaryItemRoutes,
  ...rewardLogRoutes,
  ...inscriptionRoutes,
  ...worldRoutes,
  ...parkourRoutes,
];
