import type { RouteSpec } from "../http/route.js";
import { inscriptionRoutes } from "./inscription/routes.js";
import { notImplemented } from "./not-implemented.js";
import { playerRoutes } from "./player/routes.js";
import { defineRoute } from "../http/route.js";

/**
 * The twelve routes of the spec. Routes not served yet are declared here with
 * their callers, so the allow-list table holds from day one.
 */
const pending: RouteSpec[] = [
  defineRoute({ method: "PATCH", path: "/cosmetic/update-cosmetic", summary: "Partially update a cosmetic", callers: ["A", "B", "D"], handler: notImplemented }),
  defineRoute({ method: "GET", path: "/cosmetic/get-cosmetic", summary: "One cosmetic", version: "2.0.0", callers: ["A", "B", "C", "D"], handler: notImplemented }),
  defineRoute({ method: "POST", path: "/form/create-form", summary: "Record a form answer", version: "2.0.0", callers: ["A", "B", "D"], successStatus: 201, handler: notImplemented }),
  defineRoute({ method: "GET", path: "/infecte2/get-all-infectes", summary: "Infected v2 statistics of every player", callers: ["A", "B", "D"], handler: notImplemented }),
  defineRoute({ method: "GET", path: "/temporary-item/get-active-items", summary: "Temporary shop items active now", version: "2.0.0", callers: ["A", "B", "D"], handler: notImplemented }),
  defineRoute({ method: "POST", path: "/website/create-reward-log", summary: "Record a reward given to a player", version: "2.0.0", callers: ["A", "B", "D"], successStatus: 201, handler: notImplemented }),
  defineRoute({ method: "PATCH", path: "/freebuild/update-world", summary: "Partially update a freebuild world", callers: ["A", "B"], handler: notImplemented }),
  defineRoute({ method: "GET", path: "/parkour/get-all-maps", summary: "All parkour maps", callers: ["A", "B", "C"], handler: notImplemented }),
];

export const apiRoutes: readonly RouteSpec[] = [...playerRoutes, ...inscriptionRoutes, ...pending];
