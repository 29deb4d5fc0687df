import { ENTITIES } from "../entities/all.js";

/** The kinds an entity declares (fields/entity.ts `kind`): `player`, `cosmetic`, … */
type EntityKind = (typeof ENTITIES)[number]["kind"];

/**
 * The kinds of events that are no entity's, each with the route whose callers see them (an entity
 * declares its own: `eventsSeenThrough`); undefined, the admin routes' callers alone.
 */
export const OTHER_KINDS = {
  api_user: undefined,
  leaderboard: "/infecte2/get-leaderboard",
  season: "/infecte2/get-leaderboard",
} as const;

export type EventKind = EntityKind | keyof typeof OTHER_KINDS;

/** The events the API's own writes announce (docs/WEBHOOKS.md); an import announces `<kind>.created` or `.updated` besides. */
export const WRITE_EVENTS = [
  "reward_log.created",
  "form.created",
  "cosmetic.updated",
  "world.updated",
  // The username and role, never a key.
  "api_user.created",
  // A player erased (docs/PRIVACY.md): their id and the receipt's, nothing else of theirs.
  "player.erased",
  // Leaderboards (leaderboards/periods.ts): a period begun (with the last one's final top), a season ended.
  "leaderboard.period_started",
  "season.ended",
] as const satisfies readonly `${EventKind}.${string}`[];

/** An event type: every event carries its record as the API answers it. */
export type EventType = (typeof WRITE_EVENTS)[number] | `${EntityKind}.${"created" | "updated"}`;

/** Every event type, the API's writes' first, then each entity's import events in the entities' order. */
export const EVENT_TYPES: readonly EventType[] = [
  ...new Set<EventType>([...WRITE_EVENTS, ...ENTITIES.flatMap((e) => [`${e.kind}.created`, `${e.kind}.updated`] as const)]),
];

export function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

/** `player` of `player.erased`. */
export function kindOf(type: EventType): EventKind {
  return type.slice(0, type.lastIndexOf(".")) as EventKind;
}
