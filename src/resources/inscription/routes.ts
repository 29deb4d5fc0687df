import { z } from "zod";
import { API_KEY_PATTERN } from "../../core/api-keys.js";
import { errors } from "../../core/errors.js";
import { defineRoute } from "../../http/route.js";
import { DEFAULT_ROLE, roleSchema, usernameSchema } from "../../users/users.js";

const inscriptionBody = z
  .strictObject({
    username: usernameSchema.meta({ description: "3 to 32 letters, digits, '_', '-', '.', not beginning with '-'; unique regardless of case" }),
    role: roleSchema.default(DEFAULT_ROLE).meta({ description: "1 to 32 capitals and '_'; stored, grants nothing by itself" }),
  })
  .meta({ example: { username: "website" } });

const inscriptionResponse = z
  .strictObject({
    username: z.string().meta({ example: "website" }),
    role: z.string().meta({ example: "USER" }),
    apiKey: z.string().regex(API_KEY_PATTERN).meta({ description: "The new user's API key. Shown only in this response: only its hash is stored." }),
  })
  .meta({ id: "RegisteredUser" });

export const inscriptionRoutes = [
  defineRoute({
    method: "POST",
    path: "/inscription",
    summary: "Register a new API user and obtain its API key",
    description:
      "Creates an API user and returns its key, which is never shown again. The user may call routes once an " +
      "operator puts its name in one of the caller groups (CALLERS_USER_A..D).",
    version: "2.0.0",
    callers: ["A", "B"],
    body: inscriptionBody,
    response: inscriptionResponse,
    errors: {
      409:
        "The username is taken, in any case: `Username 'WEBSITE' is already used (unique constraint api_users_username_key, " +
        "case-insensitive)`. Or the request was resent with the Idempotency-Key of one that registered the user: its key is " +
        "not kept, so the replay is this 409 (ask an operator to rotate the key if the first answer was lost).",
    },
    successStatus: 201,
    async handler({ body }, { users, db, source }) {
      const { user, apiKey } = await users.create(body.username, body.role, source, db);
      return { username: user.username, role: user.role, apiKey };
    },
    replayInstead: (result) =>
      errors.secretNotReplayed(
        `Username '${(result as { username: string }).username}' was registered by an earlier request with this ` +
          "Idempotency-Key; its API key was shown only in that answer and is not kept: ask an operator for a new one (user rotate)",
      ),
  }),
];
