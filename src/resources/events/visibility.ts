import type { CallerGroup } from "../../core/config.js";
import { ENTITIES } from "../../entities/all.js";
import { EVENT_TYPES, type EventKind, type EventType, kindOf, OTHER_KINDS } from "../../events/catalogue.js";
import { RESTRICTED } from "../../stream/topics.js";
import { ADMIN_CALLERS } from "../admin/callers.js";
import { dataRoutes } from "../data-routes.js";

/**
 * Who sees which event (docs/SECURITY.md, "Who sees which event"): the
 * callers of the route that answers its record with every field the event
 * carries, and the callers of the admin routes, who see every event (the
 * audit log shows them every write with its fields; they manage the keys).
 * A kind with no such route (undefined) reaches the admin routes' callers
 * alone. An entity names its route (`eventsSeenThrough`); OTHER_KINDS the rest. A temporary item is answered by get-active-items only between its
 * dates: one written outside them has a restricted topic (stream/topics.ts),
 * which the admin routes' callers alone see.
 */
const ROUTE_OF_KIND = {
  ...(Object.fromEntries(ENTITIES.map((e) => [e.kind, e.eventsSeenThrough])) as Record<(typeof ENTITIES)[number]["kind"], string | undefined>),
  ...OTHER_KINDS,
} satisfies Record<EventKind, string | undefined>;

function groupsOf(type: EventType): readonly CallerGroup[] {
  const path: string | undefined = ROUTE_OF_KIND[kindOf(type)];
  const route = path === undefined ? undefined : dataRoutes.find((r) => r.path === path);
  if (path !== undefined && !route) throw new Error(`event ${type}: no route ${path}`);
  return [...new Set([...ADMIN_CALLERS, ...(route?.callers ?? [])])].sort();
}

/** Each event type with the caller groups that may subscribe to it. */
export const EVENT_CALLERS: ReadonlyMap<EventType, readonly CallerGroup[]> = new Map(EVENT_TYPES.map((type) => [type, groupsOf(type)]));

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
