import { z } from "zod";
import { defineRoute } from "../../http/route.js";
import { DEFAULT_ROLE, roleSchema, usernameSchema } from "../../users/users.js";

export const inscriptionBody = z.strictObject({
  username: usernameSchema,
  role: roleSchema.default(DEFAULT_ROLE),
});

export const inscriptionRoutes = [
  defineRoute({
    method: "POST",
    path: "/inscription",
    summary: "Register a new API user and obtain its API key (shown once)",
    version: "2.0.0",
    callers: ["A", "B"],
    body: inscriptionBody,
    successStatus: 201,
    async handler({ body }, { deps }) {
      const { user, apiKey } = await deps.users.create(body.username, body.role);
      return { username: user.username, role: user.role, apiKey };
    },
  }),
];
