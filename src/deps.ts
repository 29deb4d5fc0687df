import type { CallerDirectory } from "./auth/callers.js";
import type { Config } from "./config.js";
import type { requestContext } from "./context.js";
import type { Database } from "./db/database.js";
import type { EventHub } from "./events/hub.js";
import type { Bulkhead } from "./http/bulkhead.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import type { ApiUsers } from "./users/users.js";

/** A key used from a client address its user may not use it from (the request was refused with 403). */
export interface RefusedAddress {
  username: string;
  clientAddress: string | undefined;
  requestId: string | undefined;
}

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
  metrics: Metrics;
  /** The event streams of this instance (GET /api/events). */
  events: EventHub;
  /** Where refused client addresses are recorded (beyond the warn log line): the audit log. */
  onRefusedAddress: (event: RefusedAddress) => Promise<void>;
}
