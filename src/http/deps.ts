import type { RefusedAddress } from "../auth/authenticate.js";
import type { CallerDirectory } from "../auth/callers.js";
import type { Config } from "../core/config.js";
import type { requestContext } from "../core/context.js";
import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import type { Bulkhead } from "../limits/bulkhead.js";
import type { EventHub } from "../stream/hub.js";
import type { ApiUsers } from "../users/users.js";

/** What the request path uses (handlers get only their kind's part of it). Built once per app, so tests build their own. */
export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  users: ApiUsers;
  callers: CallerDirectory;
  requestContext: typeof requestContext;
  /** The time, for "now" in handlers; tests set it. */
  now: () => Date;
  /** How many full lists are built and sent at once. */
  heavyLists: Bulkhead;
  /** The event streams of this instance (GET /api/events). */
  events: EventHub;
  /** Where refused client addresses are recorded (beyond the warn log line): the audit log. */
  onRefusedAddress: (event: RefusedAddress) => Promise<void>;
}

export type { RefusedAddress };
