import type { RouteSpec } from "../http/route.js";
import { adminRoutes } from "./admin/routes.js";
import { dataRoutes } from "./data-routes.js";
import { eventRoutes } from "./events/routes.js";

/** The twelve routes of the spec with the leaderboards, the event stream, then the admin routes behind the console (groups A and B). */
export const apiRoutes: readonly RouteSpec[] = [...dataRoutes, ...eventRoutes, ...adminRoutes];
