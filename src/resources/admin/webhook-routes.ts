import { z } from "zod";
import { errors } from "../../core/errors.js";
import { EVENT_TYPES } from "../../events/catalogue.js";
import { queryInt } from "../../fields/query-params.js";
import { INT32_MAX } from "../../fields/rules.js";
import { formatTimestamp, TIMESTAMP_PATTERN } from "../../fields/timestamp.js";
import { defineRoute, Page } from "../../http/route.js";
import {
  addEndpointIn,
  checkEndpointUrl,
  checkEvents,
  type DeliverySummary,
  type EndpointSummary,
  listDeliveries,
  listEndpoints,
  MAX_URL,
  redeliverIn,
  removeEndpointIn,
} from "../../webhooks/manage.js";
import { decodeCursor, encodeCursor } from "./audit-queries.js";
import { ADMIN_CALLERS } from "./callers.js";
import { DEFAULT_LIMIT, MAX_LIMIT, NOT_A_CURSOR, nextCursorField, pageQuery } from "./paging.js";

/**
 * The admin routes managing webhook endpoints and their deliveries: what the
 * CLI's `webhook …` does (src/webhooks/manage.ts), for the console. Each
 * write is audited in its transaction, like the CLI's.
 */

const time = z.string().regex(TIMESTAMP_PATTERN);
const at = (d: Date | null) => (d === null ? null : formatTimestamp(d));
const endpointId = z
  .int("expected a whole number")
  .min(1, "expected 1 or more")
  .max(INT32_MAX, `expected at most ${INT32_MAX}`)
  .meta({ description: "The endpoint's id", example: 1 });
const deliveryId = z
  .string("expected the delivery's id as a string of digits")
  .regex(/^[1-9]\d{0,17}$/, "expected the delivery's id, a string of digits")
  .meta({ description: "The delivery's id (as listed)", example: "42" });

const endpoint = z
  .strictObject({
    id: z.int().meta({ example: 1 }),
    url: z.string().meta({
      description:
        "Where events are sent, as shown: its user info, query values and valueless query parameters read *** (a receiver's credential may be there).",
      example: "https://example.com/hooks/game",
    }),
    events: z.array(z.string()).meta({ description: "The event types sent to it; empty: every event." }),
    createdAt: time,
    pending: z.int().meta({ description: "Deliveries waiting for an attempt or retrying" }),
    delivered: z.int(),
    failed: z.int().meta({ description: "Deliveries given up after the retry period; redeliver sends one again" }),
  })
  .meta({ id: "WebhookEndpoint" });
const endpointView = (e: EndpointSummary) => ({ ...e, createdAt: formatTimestamp(e.createdAt) });

const delivery = z
  .strictObject({
    id: deliveryId,
    endpointId: z.int(),
    webhookId: z
      .string()
      .meta({ description: "The `webhook-id` header: the same on every attempt and redelivery", example: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" }),
    type: z.string().meta({ example: "reward_log.created" }),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.int(),
    createdAt: time,
    lastAttemptAt: time.nullable(),
    nextAttemptAt: time.nullable().meta({ description: "For a pending delivery: when the next attempt is due" }),
    lastStatus: z.int().nullable().meta({ description: "The HTTP status of the last answer; null: none (never tried, timeout, refused)" }),
    lastResponse: z.string().nullable().meta({ description: "A short excerpt of the last answer, or what went wrong" }),
  })
  .meta({ id: "WebhookDelivery" });
const deliveryView = (d: DeliverySummary) => ({
  ...d,
  createdAt: formatTimestamp(d.createdAt),
  lastAttemptAt: at(d.lastAttemptAt),
  nextAttemptAt: at(d.nextAttemptAt),
});

const NOT_FOUND = { 404: "No webhook endpoint has this id: `Webhook 7 not found`." } as const;

export const webhookRoutes = [
  defineRoute({
    method: "GET",
    path: "/admin/webhooks",
    summary: "List webhook endpoints with their delivery counts",
    description:
      "Every endpoint, oldest first: its URL, the events it is sent, and how many of its deliveries are pending, delivered and failed. Never its secret.",
    callers: ADMIN_CALLERS,
    query: z.strictObject({}),
    response: z.strictObject({ endpoints: z.array(endpoint) }),
    async handler(_input, { db }) {
      return { endpoints: (await listEndpoints(db)).map(endpointView) };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/admin/webhooks/add",
    summary: "Add a webhook endpoint; its signing secret is shown once",
    description:
      "Events are sent to `url` (http or https) from now on, signed as the Standard Webhooks specification says with the " +
      "`secret` returned, which is shown only in this answer. A host resolving to a private, loopback or link-local address " +
      "is refused unless the service runs with WEBHOOKS_ALLOW_PRIVATE=true. `events` chooses the types sent (any of " +
      `${EVENT_TYPES.join(", ")}); absent or empty: every event.`,
    callers: ADMIN_CALLERS,
    body: z
      .strictObject({
        url: z.string("expected the receiver's URL").min(1, "expected the receiver's URL").max(MAX_URL, `expected at most ${MAX_URL} characters`),
        events: z
          .array(z.string("expected an event type").max(64, "expected at most 64 characters"), "expected an array of event types")
          .max(EVENT_TYPES.length, `expected at most ${EVENT_TYPES.length} event types`)
          .optional()
          .meta({ description: "Event types to send; absent or empty: every event", example: ["reward_log.created"] }),
      })
      .meta({ example: { url: "https://example.com/hooks/game", events: ["reward_log.created", "form.created"] } }),
    response: z
      .strictObject({
        endpoint,
        secret: z
          .string()
          .regex(/^whsec_/)
          .meta({ description: "The signing secret (whsec_…). Shown only in this response: give it to the receiver now." }),
      })
      .meta({ id: "AddedWebhook" }),
    successStatus: 201,
    errors: { 409: "Resent with the Idempotency-Key of an addition that succeeded: its secret is not shown again, so the replay is this 409." },
    // The host's DNS lookup, before the transaction: a slow name server holds no connection.
    checkFirst: async ({ body }, config) => {
      checkEvents(body.events ?? []);
      await checkEndpointUrl(body.url, config.webhooksAllowPrivate);
    },
    async handler({ body }, { db, source, webhooks }) {
      const { endpoint: added, secret } = await addEndpointIn(db, webhooks, body, source);
      return { endpoint: endpointView(added), secret };
    },
    replayInstead: (result) =>
      errors.secretNotReplayed(
        `Webhook ${(result as { endpoint: { id: number } }).endpoint.id} was added by an earlier request with this Idempotency-Key; ` +
          "its secret was shown only in that answer: remove it and add it again",
      ),
  }),
  defineRoute({
    method: "POST",
    path: "/admin/webhooks/remove",
    summary: "Remove a webhook endpoint",
    description: "Nothing more is sent to it: its deliveries, pending ones included, are deleted with it.",
    callers: ADMIN_CALLERS,
    body: z.strictObject({ endpointId }).meta({ example: { endpointId: 1 } }),
    response: z.strictObject({ id: z.int(), url: z.string() }).meta({ id: "RemovedWebhook" }),
    errors: NOT_FOUND,
    handler: ({ body }, { db, source }) => removeEndpointIn(db, body.endpointId, source),
  }),
  defineRoute({
    method: "GET",
    path: "/admin/webhooks/deliveries",
    summary: "List deliveries, newest first, of one endpoint or all; paged",
    description:
      `At most \`limit\` deliveries (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}); when there are more, \`nextCursor\` and a ` +
      '`Link: <…>; rel="next"` header name the next page. Each with its status, attempts and the last answer\'s status and excerpt.',
    callers: ADMIN_CALLERS,
    paged: true,
    query: z.strictObject({
      endpointId: queryInt(endpointId).optional().meta({ description: "Only this endpoint's deliveries", example: 1 }),
      ...pageQuery("Deliveries"),
    }),
    response: z.strictObject({
      deliveries: z.array(delivery),
      nextCursor: nextCursorField,
    }),
    errors: NOT_FOUND,
    async handler({ query }, { db }) {
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      if (query.cursor !== undefined && before === undefined) {
        throw errors.validation(`cursor: ${NOT_A_CURSOR}`);
      }
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows = await listDeliveries(db, { endpointId: query.endpointId, limit: limit + 1, before });
      const deliveries = rows.slice(0, limit).map(deliveryView);
      const nextCursor = rows.length > limit ? encodeCursor(deliveries.at(-1)!.id) : null;
      let next: string | undefined;
      if (nextCursor !== null) {
        const params = new URLSearchParams();
        if (query.endpointId !== undefined) params.set("endpointId", String(query.endpointId));
        params.set("limit", String(limit));
        params.set("cursor", nextCursor);
        next = params.toString();
      }
      return new Page({ deliveries, nextCursor }, next);
    },
  }),
  defineRoute({
    method: "POST",
    path: "/admin/webhooks/redeliver",
    summary: "Send a delivered or failed delivery again",
    description:
      "The delivery becomes pending and is sent at once, with the same `webhook-id` (a receiver that kept it drops the " +
      "duplicate), and retried like a new one.",
    callers: ADMIN_CALLERS,
    body: z.strictObject({ deliveryId }).meta({ example: { deliveryId: "42" } }),
    response: delivery,
    errors: {
      404: "No delivery has this id (it may have been removed with its endpoint): `Webhook delivery 42 not found`.",
      409: "The delivery is still pending: it is being sent or retried already.",
    },
    async handler({ body }, { db, source }) {
      return deliveryView(await redeliverIn(db, BigInt(body.deliveryId), source));
    },
  }),
];
