import type { RouteSpec } from "../http/route.js";
import { adminRoutes } from "./admin/routes.js";
import { cosmeticRoutes } from "./cosmetic/routes.js";
import { eventRoutes } from "./events/routes.js";
import { formRoutes } from "./form/routes.js";
import { infectedRoutes } from "./infected/routes.js";
import { inscriptionRoutes } from "./inscription/routes.js";
import { parkourRoutes } from "./parkour/routes.js";
import { playerRoutes } from "./player/routes.js";
import { rewardLogRoutes } from "./reward-log/routes.js";
import { temporaryItemRoutes } from "./temporary-item/routes.js";
import { worldRoutes } from "./world/routes.js";

/** The twelve routes of the spec, the event stream, then the admin routes behind the console (groups A and B). */
export const apiRoutes: readonly RouteSpec[] = [
  ...playerRoutes,
  ...cosmeticRoutes,
  ...formRoutes,
  ...infectedRoutes,
  ...temporaryItemRoutes,
  ...rewardLogRoutes,
  ...inscriptionRoutes,
  ...worldRoutes,
  ...parkourRoutes,
  ...eventRoutes,
  ...adminRoutes,
];
