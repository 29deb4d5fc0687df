import type { Logger } from "../core/logger.js";
import type { Database } from "../db/database.js";
import { frozenWrite } from "../db/service-state.js";
import { announce, ensurePeriods } from "./periods.js";

/** How often an instance makes the coming periods and announces those begun (a minute late at most). */
export const KEEP_EVERY_MS = 60_000;

/**
 * Keeps the periods on this instance (periods.ts): at start, then every minute, makes the current and
 * next day, week and month (one statement) and announces what has begun or ended (a statement each). Several
 * instances doing so at once make and announce each once (a unique key, a marked row).
 */
export class PeriodKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly timeZone: string,
    private readonly logger: Logger,
  ) {}

  /** One round now; resolves once it is done (the first is awaited at start, so that the boards have their periods). */
  async keep(): Promise<void> {
    try {
      await ensurePeriods(this.db.prisma, this.timeZone);
      await announce(this.db.prisma);
    } catch (error) {
      // Frozen writes (a move's final backup): the periods are made once thawed, counting from then.
      if (frozenWrite(error)) return;
      this.logger.warn({ err: error }, "leaderboards: making or announcing the periods failed; the next try is in a minute");
    }
  }

  async start(): Promise<void> {
    await this.keep();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.keep().finally(() => this.schedule());
    }, KEEP_EVERY_MS);
    this.timer.unref();
  }
}
