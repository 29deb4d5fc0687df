import { z } from "zod";
import { CALLER_GROUPS, type CallerGroup } from "../../core/config.js";
import { errors } from "../../core/errors.js";
import { EVENT_TYPES, isEventType } from "../../events/catalogue.js";
import { instant } from "../../fields/timestamp.js";
import { defineRoute, EventStreamAnswer } from "../../http/route.js";
import { topicSet } from "../../stream/batch.js";
import { EVENT_ID, EventIds, UNSEALED_EVENT_ID } from "../../stream/event-id.js";
import { HEARTBEAT_MS, RETRY_MS } from "../../stream/stream.js";
import { EVENT_CALLERS, VISIBILITY_TEXT, visibleTopics } from "./visibility.js";

/** Ids as the document shows them: sealed under a key of zeros. */
const EXAMPLE_IDS = ((ids) => [ids.event({ xid: 753n, id: 73n }), ids.event({ xid: 753n, id: 74n })])(new EventIds(Buffer.alloc(32)));

const eventId = z
  .string()
  .refine((text) => EVENT_ID.test(text) || UNSEALED_EVENT_ID.test(text), { message: "expected the id of an event this stream sent (opaque, as received)" })
  .meta({ description: "The `id:` of the last event received: the stream resumes right after it.", example: EXAMPLE_IDS[1] });

const eventsQuery = z.strictObject({
  types: z
    .string()
    .transform((raw, ctx) => {
      const asked = [...new Set(raw.split(",").map((t) => t.trim()))];
      const types = asked.filter(isEventType);
      const unknown = asked.filter((t) => !isEventType(t));
      if (asked.length === 0 || unknown.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `unknown event type${unknown.length > 1 ? "s" : ""} ${unknown.map((t) => `'${t}'`).join(", ") || "''"}; expected any of ${EVENT_TYPES.join(", ")}`,
        });
        return z.NEVER;
      }
      return types;
    })
    .optional()
    .meta({
      description: "Comma-separated event types (`reward_log.created,form.created`); default: every type this API user may see.",
      example: "reward_log.created,form.created",
    }),
  lastEventId: eventId.optional().meta({ description: "Last-Event-ID, for clients that cannot set headers." }),
  startAt: instant.optional().meta({
    description:
      "Without a resume point: start with the events written at or after this moment (the service's clock, to the millisecond), " +
      "within the retention; for a client that subscribed before it could connect (the service down at its start).",
    example: "2026-11-25T10:00:00.000Z",
  }),
});

const eventsHeaders = z.object({ "Last-Event-ID": eventId.optional() });

const sseText = z.string().meta({
  description:
    "Server-sent events (text/event-stream). Each event: `id:` (opaque), `event:` (its type), `data:` (one line: " +
    'the webhook body, `{"type","timestamp","data"}`, data being the record as the API answers it). Also `retry:` (ms) first, ' +
    "then, when starting from now or at a moment (`startAt`), an `id:` alone (the position, to resume from); and every " +
    `${HEARTBEAT_MS / 1000} s a \`: heartbeat\` comment with an \`id:\` (the position, moved past the events not sent).`,
  example:
    `retry: ${RETRY_MS}\nid: ${EXAMPLE_IDS[0]}\n\n` +
    `id: ${EXAMPLE_IDS[1]}\nevent: reward_log.created\ndata: {"type":"reward_log.created","timestamp":"2026-11-25T10:00:00.000Z","data":{"id":7,"playerId":1,"rewardId":42,"rewardedAt":"2026-11-25T10:00:00Z"}}\n\n`,
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
      "comes, once. Without one, `startAt` starts at a moment rather than now. A resume point older than the retention, or from another database (or this one before a restore), is " +
      "answered 410: reload by sync, then stream again without it. " +
      VISIBILITY_TEXT +
      " The stream ends when its key is revoked or expires, when its client's address is no longer allowed, when the instance " +
      "stops, or when the client lets more than EVENTS_BUFFER_BYTES wait: " +
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
      const may = (groups: readonly CallerGroup[]) => callers.may(caller.username, groups);
      const allowed = [...EVENT_CALLERS].filter(([, groups]) => may(groups)).map(([type]) => type);
      const types = query.types ?? allowed;
      const refused = types.filter((t) => !allowed.includes(t));
      if (refused.length > 0) throw errors.typesForbidden(refused);
      const resumeAfter =
        header !== undefined
          ? { id: header, parameter: "Last-Event-ID" as const }
          : query.lastEventId !== undefined
            ? { id: query.lastEventId, parameter: "lastEventId" as const }
            : undefined;
      if (query.startAt && resumeAfter) throw errors.validation("startAt: send it or a resume point (Last-Event-ID, lastEventId), not both");
      return Promise.resolve(new EventStreamAnswer(topicSet(visibleTopics(types, may)), resumeAfter ?? (query.startAt && { startAt: query.startAt })));
    },
  }),
];
