import { CALLER_GROUPS, type CallerGroup, type Config } from "../core/config.js";

/**
 * Which configured caller groups an API user belongs to. Usernames compare
 * case-insensitively; a name may sit in several groups, or in none (then
 * every route answers 403 until an operator adds it to a group).
 */
export class CallerDirectory {
  private readonly groupsByName = new Map<string, Set<CallerGroup>>();

  constructor(callers: Config["callers"]) {
    for (const group of CALLER_GROUPS) {
      for (const name of callers[group]) {
        const key = name.toLowerCase();
        const groups = this.groupsByName.get(key) ?? new Set<CallerGroup>();
        groups.add(group);
        this.groupsByName.set(key, groups);
      }
    }
  }

  groupsOf(username: string): ReadonlySet<CallerGroup> {
    return this.groupsByName.get(username.toLowerCase()) ?? new Set();
  }

  may(username: string, allowed: readonly CallerGroup[]): boolean {
    const groups = this.groupsOf(username);
    return allowed.some((group) => groups.has(group));
  }
}
