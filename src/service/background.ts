import type { Registry } from "prom-client";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import { PeriodKeeper } from "../leaderboards/keeper.js";
import { RetentionSweeper } from "../privacy/retention-sweeper.js";

/** The instance's timed work beside the requests: the retention sweep (hourly) and the leaderboards' periods (every minute). */
export interface Background {
  stop(): Promise<void>;
}

export async function startBackground(db: Database, config: Config, logger: Logger, registry: Registry): Promise<Background> {
  const retention = new RetentionSweeper(db.prisma, config, logger, registry);
  const periods = new PeriodKeeper(db, config.leaderboardTimeZone, logger);
  await periods.start();
  retention.start();
  return {
    async stop() {
      await Promise.all([retention.stop(), periods.stop()]);
    },
  };
}
