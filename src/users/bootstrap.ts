import type { Config } from "../core/config.js";
import { ApiError } from "../core/errors.js";
import type { Database } from "../db/database.js";
import { ApiUsers } from "./users.js";

/**
 * When no API user exists yet (a new database, embedded or PostgreSQL),
 * create one of group A so that a newcomer can call the API straight away.
 * Its key is returned for the caller to print once; it is stored hashed like
 * any other. Several instances starting together on one empty database all
 * try: the username's unique index lets exactly one of them create it, and
 * the others return undefined.
 */
export async function createFirstUser(users: ApiUsers, config: Config): Promise<{ username: string; apiKey: string } | undefined> {
  if ((await users.count()) > 0) return undefined;
  const username = config.callers.A[0]!;
  try {
    const { apiKey } = await users.create(username, undefined, { actor: "first-start" });
    return { username, apiKey };
  } catch (error) {
    if (error instanceof ApiError && error.kind === "DUPLICATE") return undefined;
    throw error;
  }
}

/** On a database without API users, creates the first one and prints its key, once. */
export async function bootstrapFirstUser(db: Database, config: Config): Promise<void> {
  const first = await createFirstUser(new ApiUsers(db.prisma), config);
  if (first) process.stdout.write(firstUserBanner(first.username, first.apiKey));
}

function firstUserBanner(username: string, apiKey: string): string {
  const line = "=".repeat(72);
  return [
    line,
    `First start: created the API user '${username}' (group A). Its API key, shown only this once:`,
    "",
    `    ${apiKey}`,
    "",
    "Send it as `X-API-Key: <key>`. Lost it? `npm run --silent cli -- user rotate " + username + " --grace 0` prints a new one.",
    line,
    "",
  ].join("\n");
}
