import { z } from "zod";
import { AddressAllowList } from "../../auth/address-allow-list.js";
import { API_KEY_PATTERN } from "../../core/api-keys.js";
import { CALLER_GROUPS } from "../../core/config.js";
import { errors } from "../../core/errors.js";
import { TIMESTAMP_PATTERN } from "../../fields/timestamp.js";
import { defineRoute } from "../../http/route.js";
import { DEFAULT_GRACE_SECONDS, graceSecondsSchema, MAX_GRACE_SECONDS } from "../../users/grace.js";
import { existingUsernameSchema } from "../../users/users.js";
import { auditRoutes } from "./audit-routes.js";
import { ADMIN_CALLERS } from "./callers.js";
import { playerErasureRoutes } from "./player-erasure-routes.js";
import { playerExportRoutes } from "./player-export-routes.js";
import { seasonRoutes } from "./season-routes.js";
import { apiUserView, listApiUsers } from "./users-queries.js";
import { webhookRoutes } from "./webhook-routes.js";

/**
 * The admin routes (/api/admin/…) behind the console at /admin: API users
 * and their keys, the audit log, webhook endpoints. Groups A and B only, like POST
 * /inscription, which creates users. Every write records its audit entry in
 * its transaction and announces key changes to every instance.
 */

const time = z.string().regex(TIMESTAMP_PATTERN);
const group = z.enum(CALLER_GROUPS);

const apiUser = z
  .strictObject({
    username: z.string().meta({ example: "website" }),
    role: z.string().meta({ example: "USER" }),
    groups: z.array(group).meta({ description: "The caller groups the user is in (CALLERS_USER_A..D); none: every route answers 403." }),
    status: z.enum(["active", "revoked"]),
    keyHint: z.string().meta({ description: "The first 8 characters of the current key (gsk_ and 4 more).", example: "gsk_Qx3v" }),
    keyLastUsedAt: time.nullable().meta({ description: "When the current key last authenticated, to the minute (up to a minute late); null: never." }),
    createdAt: time,
    rotatedAt: time.nullable(),
    revokedAt: time.nullable(),
    allowedAddresses: z
      .array(z.string())
      .nullable()
      .meta({ description: "CIDR blocks the keys may be used from; null: anywhere.", example: ["203.0.113.0/24"] }),
    pendingRotation: z
      .strictObject({
        keyHint: z.string(),
        expiresAt: time.meta({ description: "When the previous key stops working." }),
        lastUsedAt: time.nullable(),
      })
      .nullable()
      .meta({ description: "The key replaced by the last rotation while it still works (its grace period); null: none." }),
  })
  .meta({ id: "ApiUser" });

const username = existingUsernameSchema.meta({ description: "The API user (any case)", example: "website" });
const NOT_FOUND = { 404: "No API user has this name: `API user 'NAME' not found`." } as const;
/** Usernames compare regardless of case, as the database's citext does. */
const sameUser = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export const adminRoutes = [
  defineRoute({
    method: "GET",
    path: "/admin/session",
    summary: "Who the key belongs to (the console's sign-in)",
    description: "The caller's username, role and caller groups. A key outside groups A and B gets 403: the console is for them.",
    callers: ADMIN_CALLERS,
    query: z.strictObject({}),
    response: z.strictObject({ username: z.string(), role: z.string(), groups: z.array(group) }).meta({ id: "AdminSession" }),
    handler: (_input, { caller, callers }) =>
      Promise.resolve({ username: caller.username, role: caller.role, groups: [...callers.groupsOf(caller.username)].sort() }),
  }),
  defineRoute({
    method: "GET",
    path: "/admin/users",
    summary: "List API users with their keys' state",
    description:
      "Every API user, oldest first: groups, the current key's hint and last use, a rotation's previous key while it " +
      "still works, allowed addresses. Never a key or its hash. Create users with POST /inscription.",
    callers: ADMIN_CALLERS,
    query: z.strictObject({}),
    response: z.strictObject({ users: z.array(apiUser) }),
    async handler(_input, { db, callers, now }) {
      const at = now();
      return { users: (await listApiUsers(db)).map((u) => apiUserView(u, callers, at)) };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/admin/users/rotate-key",
    summary: "Issue a new key; the old one keeps working for a grace period",
    description:
      "Returns the new key, shown only in this answer. The previous key keeps working for `graceSeconds` (default " +
      `${DEFAULT_GRACE_SECONDS}, 24 hours; at most ${MAX_GRACE_SECONDS}, 30 days; 0: it stops at once), so that its holder can ` +
      "switch without downtime; `pendingRotation.expiresAt` says until when. A key replaced by an earlier rotation stops at " +
      "once (at most two keys work). A revoked user is reinstated with the new key alone. Every instance drops cached keys as soon as it is told (NOTIFY), without waiting for a cache to expire.",
    callers: ADMIN_CALLERS,
    body: z
      .strictObject({
        username,
        graceSeconds: graceSecondsSchema.default(DEFAULT_GRACE_SECONDS).meta({ description: "How long the old key keeps working, in seconds" }),
      })
      .meta({ example: { username: "website", graceSeconds: 3600 } }),
    response: z
      .strictObject({
        user: apiUser,
        apiKey: z.string().regex(API_KEY_PATTERN).meta({ description: "The new key. Shown only in this response: only its hash is stored." }),
      })
      .meta({ id: "RotatedKey" }),
    errors: {
      ...NOT_FOUND,
      409: "Resent with the Idempotency-Key of a rotation that succeeded: the key it issued is not kept, so the replay is this 409.",
    },
    async handler({ body }, { users, db, source, callers, now }) {
      const { user, apiKey } = await users.rotate(body.username, source, body.graceSeconds, db);
      return { user: apiUserView(user, callers, now()), apiKey };
    },
    replayInstead: () =>
      errors.secretNotReplayed("This key was rotated by an earlier request with this Idempotency-Key; its new key was shown only in that answer: rotate again"),
  }),
  defineRoute({
    method: "POST",
    path: "/admin/users/revoke",
    summary: "Revoke all of a user's keys at once",
    description:
      "The current key and a previous one still in its grace period stop at once, on every instance as soon as it is told (NOTIFY). " +
      "The username stays taken; rotating the key reinstates the user.",
    callers: ADMIN_CALLERS,
    body: z.strictObject({ username }).meta({ example: { username: "website" } }),
    response: apiUser,
    errors: {
      ...NOT_FOUND,
      409:
        "The user is already revoked (`API user 'website' is already revoked`), or is the one calling: an admin cannot " +
        "revoke the key it signed in with (another admin can, or the operator's command line).",
    },
    async handler({ body }, { users, db, source, caller, callers, now }) {
      if (sameUser(caller.username, body.username)) {
        throw errors.conflict(
          `username: '${body.username}' is the API user making this request; revoke it with another admin's key, or with the command line (user revoke)`,
        );
      }
      return apiUserView(await users.revoke(body.username, source, db), callers, now());
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/admin/users/allowed-addresses",
    summary: "Set where a user's keys may be used from",
    description:
      "IPv4/IPv6 addresses or CIDR blocks; `null` lets the keys work from anywhere again. From elsewhere a key gets 403. " + "Holds at once on every instance.",
    callers: ADMIN_CALLERS,
    body: z
      .strictObject({
        username,
        allowedAddresses: z
          .array(z.string("expected a string").max(64, "expected at most 64 characters"), "expected an array of addresses or null")
          .min(1, "expected at least one address, or null for anywhere")
          .max(100, "expected at most 100 addresses")
          .nullable()
          .meta({ description: "Addresses or CIDR blocks; null: anywhere", example: ["203.0.113.0/24", "2001:db8::/32"] }),
      })
      .meta({ example: { username: "website", allowedAddresses: ["203.0.113.0/24"] } }),
    response: apiUser,
    errors: {
      ...NOT_FOUND,
      409: "Set on the API user making the request, the addresses would not include the one it calls from: it would lock itself out.",
    },
    async handler({ body }, { users, db, source, caller, callers, now }) {
      let list: AddressAllowList | null = null;
      if (body.allowedAddresses !== null) {
        const parsed = AddressAllowList.parse(body.allowedAddresses.join(","));
        if (!parsed.list) throw errors.validation(`allowedAddresses: ${parsed.problems.join("; ")}`);
        list = parsed.list;
        if (sameUser(caller.username, body.username) && !list.allows(source.clientAddress ?? undefined)) {
          throw errors.conflict(
            `allowedAddresses: none of them is ${source.clientAddress ?? "this request's address"}, where '${body.username}' (the API user making this request) calls from: it would lock itself out`,
          );
        }
      }
      return apiUserView(await users.setAllowedAddresses(body.username, list, source, db), callers, now());
    },
  }),
  ...auditRoutes,
  ...playerExportRoutes,
  ...playerErasureRoutes,
  ...webhookRoutes,
  ...seasonRoutes,
];
