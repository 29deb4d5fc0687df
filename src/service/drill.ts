import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { OperatorError } from "../core/operator-error.js";
import type { Database } from "../db/database.js";
import { drillMarker } from "../db/service-state.js";

/**
 * A drill's copy (restored with DRILL_MODE=true) serves only in drill mode, where production's receivers,
 * Redis and replica are out of reach (core/config.ts); drill mode says so at start.
 */
export async function refuseDrillCopy(db: Database, config: Config, logger: Logger): Promise<void> {
  if (config.drillMode) {
    const unused = config.drillOverrides.length ? `; set but not used: ${config.drillOverrides.join(", ")}` : "";
    logger.warn(`drill mode (DRILL_MODE=true): no webhook is delivered, rate limits count in this process, reads go to DATABASE_URL${unused}`);
    return;
  }
  const drill = await drillMarker(db.prisma);
  if (drill) {
    throw new OperatorError(
      `Refused to start: this database is a restore drill's copy (restored ${drill.since} with DRILL_MODE=true, from a backup made ${drill.backupMadeAt}), ` +
        "and its webhooks would deliver to production's receivers: start the server on it with DRILL_MODE=true.",
    );
  }
}
