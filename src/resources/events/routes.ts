import { z } from "zod";
import { CALLER_GROUPS, type CallerGroup } from "../../config.js";
import { decodeEventId } from "../../events/event-id.js";
import { typeSet } from "../../events/batch.js";
import { HEARTBEAT_MS, RETRY_MS } from "../../events/stream.js";
import { errors } from "../../errors.js";
import { defineRoute, EventStreamAnswer } from "../../http/route.js";
import { IMPORT_KINDS, WEBHOOK_EVENTS } from "../../webhooks/events.js";
import { dataRoutes } from "../data-routes.js";

/**
 * Who may see an event: whoever may call the route that reads or writes its
 * data (issue 25). Each kind of record names that route; the callers are the
 * route's own, so that changing a route's callers changes its events'.
 */
const ROUTE_OF_KIND: Record<(typeof IMPORT_KINDS)[keyof typeof IMPORT_KINDS] | "api_user", string> = {
  player: "/player/get-all-players",
  cosmetic: "/cosmetic/get-cosmetic",
  form: "/form/create-form",
  infected_stats: "/infecte2/get-all-infectes",
  temporary_item: "/temporary-item/get-active-items",
  reward_log: "/website/create-reward-log",
  world: "/freebuild/update-world",
  parkour_map: "/parkour/get-all-maps",
  api_user: "/inscription",
};


/** Each event type with the caller groups that may subscribe to it. */
export const EVENT_CALLERS: ReadonlyMap<string, readonly CallerGroup[]> = new Map(
  WEBHOOK_EVENTS.map((type) => {
    const path = ROUTE_OF_KIND[type.slice(0, type.lastIndexOf(".")) as keyof typeof ROUTE_OF_KIND];
    const route = dataRoutes.find((r) => r.path === path);
    if (!route) throw new Error(`event ${type}: no route says who may see it`);
    return [type, route.callers];
  }),
);

const eventId = z
  .string()
  .refine((text) => decodeEventId(text) !== undefined, { message: "expected the id of an event this stream sent (32 hex digits)" })
  .meta({ description: "The `id:` of the last event received: the stream resumes right after it.", example: "00000000000002f1000000000000004a" });

const eventsQuery = z.strictObject({
  types: z
    .string()
    .transform((raw, ctx) => {
      const types = [...new Set(raw.split(",").map((t) => t.trim()))];
      const unknown = types.filter((t) => !EVENT_CALLERS.has(t));
      if (types.length === 0 || unknown.length > 0) {
        ctx.addIssue({ code: "custom", message: `unknown event type${unknown.length > 1 ? "s" : ""} ${unknown.map((t) => `'${t}'`).join(", ") || "''"}; expected any of ${WEBHOOK_EVENTS.join(", ")}` });
        return z.NEVER;
      }
      return types;
    })
    .optional()
    .meta({ description: "Comma-separated event types (`reward_log.created,form.created`); default: every type this API user may see.", example: "reward_log.created,form.created" }),
  lastEventId: eventId.optional().meta({ description: "Last-Event-ID, for clients that cannot set headers." }),
});

const eventsHeaders = z.object({ "Last-Event-ID": eventId.optional() });

const sseText = z.string().meta({
  description:
    "Server-sent events (text/event-stream). Each event: `id:` (opaque, increasing), `event:` (its type), `data:` (one line: " +
    'the webhook body, `{"type","timestamp","data"}`, data being the record as the API answers it). Also `retry:` (ms) first, ' +
    `a \`: heartbeat\` comment every ${HEARTBEAT_MS / 1000} s, and lines with an \`id:\` alone (the position, to resume from).`,
  example:
    `retry: ${RETRY_MS}\nid: 00000000000002f10000000000000049\n\n` +
    'id: 00000000000002f1000000000000004a\nevent: reward_log.created\ndata: {"type":"reward_log.created","timestamp":"2026-11-25T10:00:00.000Z","data":{"id":7,"playerId":1,"rewardId":42,"rewardedAt":"2026-11-25T10:00:00Z"}}\n\n',
});

export const eventRoutes = [
  defineRoute({
    method: "GET",
    path: "/events",
    summary: "Live events: the API's writes as they commit (server-sent events)",
    description:
      "A stream of the events webhooks announce (docs/WEBHOOKS.md), for callers that cannot receive webhooks (behind NAT). " +
      "Every event committed through any instance reaches every stream, once, in the order of the transactions that wrote them. " +
      "To resume after a dropped connection, reconnect (to any instance) with `Last-Event-ID` (or `lastEventId`): every event since " +
      "comes, once. A resume point older than the retention is answered 410: reload by sync, then stream again without it. " +
      "A caller may subscribe to a type when it may call the route that reads or writes that data (cosmetic: get-cosmetic; " +
      "world: update-world; reward_log: create-reward-log; form: create-form; api_user: inscription; player: get-all-players; " +
      "infected_stats: get-all-infectes; temporary_item: get-active-items; parkour_map: get-all-maps). The stream ends when its " +
      "key is revoked or expires, when the instance stops, or when the client lets more than EVENTS_BUFFER_BYTES wait: " +
      "reconnect and resume. Opening a stream counts against the rate limit; its events do not.",
    callers: [...CALLER_GROUPS],
    query: eventsQuery,
    headers: eventsHeaders,
    response: sseText,
    eventStream: true,
    errors: {
      403: "Types were asked for that this API user may not see: `types: this API user may not subscribe to world.updated (…)`; or the user is in no caller group.",
    },
    handler({ query, headers }, { caller, callers }) {
      const header = headers["Last-Event-ID"];
      if (header !== undefined && query.lastEventId !== undefined && header !== query.lastEventId) {
        throw errors.validation("lastEventId: differs from the Last-Event-ID header; send one of them");
      }
      const allowed = [...EVENT_CALLERS].filter(([, groups]) => callers.may(caller.username, groups)).map(([type]) => type);
      const types = query.types ?? allowed;
      const refused = types.filter((t) => !allowed.includes(t));
      if (refused.length > 0) throw errors.typesForbidden(refused);
      const from = header ?? query.lastEventId;
      return Promise.resolve(new EventStreamAnswer(typeSet(types), from === undefined ? undefined : decodeEventId(from)));
    },
  }),
];
