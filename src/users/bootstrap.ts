import type { Config } from "../config.js";
import type { ApiUsers } from "./users.js";

/**
 * On the embedded database only: when no API user exists yet, create one of
 * group A so that a newcomer can call the API straight away. Its key is
 * returned for the caller to print once; it is stored hashed like any other.
 */
export async function createFirstUser(users: ApiUsers, config: Config): Promise<{ username: string; apiKey: string } | undefined> {
  if ((await users.count()) > 0) return undefined;
  const username = config.callers.A[0]!;
  const { apiKey } = await users.create(username, undefined, { actor: "first-start" });
  return { username, apiKey };
}

export function firstUserBanner(username: string, apiKey: string): string {
  const line = "=".repeat(72);
  return [
    line,
    `First start: created the API user '${username}' (group A). Its API key, shown only this once:`,
    "",
    `    ${apiKey}`,
    "",
    "Send it as `X-API-Key: <key>`. Create more users with `npm run --silent cli -- user create <name>`.",
    line,
    "",
  ].join("\n");
}
