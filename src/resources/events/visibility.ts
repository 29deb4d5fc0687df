import type { CallerGroup } from "../../core/config.js";
import { RESTRICTED } from "../../events/topics.js";
import { IMPORT_KINDS, WEBHOOK_EVENTS } from "../../audit/events.js";
import { ADMIN_CALLERS } from "../admin/callers.js";
import { dataRoutes } from "../data-routes.js";

type Kind = (typeof IMPORT_KINDS)[keyof typeof IMPORT_KINDS] | "api_user" | "leaderboard" | "season";

/**
 * Who sees which event (docs/SECURITY.md, "Who sees which event"): the
 * callers of the route that answers its record with every field the event
 * carries, and the callers of the admin routes, who see every event (the
 * audit log shows them every write with its fields; they manage the keys).
 * A kind with no such route (undefined) reaches the admin routes' callers
 * alone. A temporary item is answered by get-active-items only between its
 * dates: one written outside them has a restricted topic (events/topics.ts),
 * which the admin routes' callers alone see.
 */
const ROUTE_OF_KIND: Record<Kind, string | undefined> = {
  player: "/player/get-all-full-players-by-gradeId",
  cosmetic: "/cosmetic/get-cosmetic",
  infected_stats: "/infecte2/get-all-infectes",
  temporary_item: "/temporary-item/get-active-items",
  parkour_map: "/parkour/get-all-maps",
  leaderboard: "/infecte2/get-leaderboard",
  season: "/infecte2/get-leaderboard",
  // Answered by their write routes to their writer alone, and by the audit log.
  form: undefined,
  reward_log: undefined,
  world: undefined,
  api_user: undefined,
};

function groupsOf(type: string): readonly CallerGroup[] {
  const kind = type.slice(0, type.lastIndexOf(".")) as Kind;
  if (!(kind in ROUTE_OF_KIND)) throw new Error(`event ${type}: no kind says who may see it`);
  const path = ROUTE_OF_KIND[kind];
  const route = path === undefined ? undefined : dataRoutes.find((r) => r.path === path);
  if (path !== undefined && !route) throw new Error(`event ${type}: no route ${path}`);
  return [...new Set([...ADMIN_CALLERS, ...(route?.callers ?? [])])].sort();
}

/** Each event type with the caller groups that may subscribe to it. */
export const EVENT_CALLERS: ReadonlyMap<string, readonly CallerGroup[]> = new Map(WEBHOOK_EVENTS.map((type) => [type, groupsOf(type)]));

/** The topics of these types that a caller of these groups may see (`may`: whether it is in one of them). */
export function visibleTopics(types: readonly string[], may: (groups: readonly CallerGroup[]) => boolean): string[] {
  return types.flatMap((type) => (may(ADMIN_CALLERS) ? [type, `${type}${RESTRICTED}`] : [type]));
}

/** The rule in a sentence per kind, for the route's documentation. */
export const VISIBILITY_TEXT =
  "A caller sees an event when it may call the route that answers its record with every field the event carries (" +
  Object.entries(ROUTE_OF_KIND)
    .filter(([, path]) => path !== undefined)
    .map(([kind, path]) => `${kind}: ${path!.slice(path!.lastIndexOf("/") + 1)}`)
    .join("; ") +
  `; a temporary item only while between its dates when written); the callers of the admin routes (groups ${ADMIN_CALLERS.join(", ")}) ` +
  `see every event, and alone those of ${Object.entries(ROUTE_OF_KIND)
    .filter(([, path]) => path === undefined)
    .map(([kind]) => kind)
    .join(", ")}.`;
