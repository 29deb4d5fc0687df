import { Counter, Gauge, type Registry } from "prom-client";
import type { Logger } from "../core/logger.js";
import type { DbClient } from "../db/client.js";
import { lastSweep, RETENTION_KINDS, type RetentionSettings, SWEEP_EVERY_MS, type SweepResult, sweeperName, sweepRetention } from "./retention.js";

/** The first try after a start comes this long after it (a random part of it): instances started together do not race. */
const FIRST_TRY_MS = 60_000;

/**
 * Runs the retention sweep (retention.ts) on this instance: a try every SWEEP_EVERY_MS, which sweeps
 * only if no instance has swept for that long and none is sweeping. Its metrics: this instance's
 * sweeps by result and rows removed by kind, and the database's last sweep (every instance reports it).
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private readonly holder = sweeperName();
  private readonly sweeps: Counter<"result">;
  private readonly removed: Counter<"kind">;

  constructor(
    private readonly db: DbClient,
    private readonly settings: RetentionSettings,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.sweeps = new Counter({
      name: "retention_sweeps_total",
      help: "This instance's tries of the retention sweep by result: done, not_due (swept less than an hour ago), busy (another instance sweeps), frozen (writes frozen), failed.",
      labelNames: ["result"],
      registers: [registry],
    });
    for (const result of ["done", "not_due", "busy", "frozen", "failed"]) this.sweeps.inc({ result }, 0);
    this.removed = new Counter({
      name: "retention_removed_total",
      help: "What this instance's retention sweeps removed, by kind (docs/PRIVACY.md): player_ip, audit_ip, audit_values, outbox_events, idempotency_records, leaderboard_periods.",
      labelNames: ["kind"],
      registers: [registry],
    });
    for (const kind of RETENTION_KINDS) this.removed.inc({ kind }, 0);
    const read = () => lastSweep(db);
    new Gauge({
      name: "retention_last_sweep_timestamp_seconds",
      help: "When the last retention sweep on this database ended (any instance's), Unix time; 0 before the first.",
      registers: [registry],
      aggregator: "max",
      async collect() {
        const last = await read();
        this.set(last.finishedAt ? last.finishedAt.getTime() / 1000 : 0);
      },
    });
  }

  start(): void {
    this.schedule(Math.round(FIRST_TRY_MS * (0.5 + Math.random() / 2)));
  }

  /** One try now (`cli retention sweep` forces one past the hour), counted in the metrics. */
  async sweep(force = false): Promise<SweepResult> {
    try {
      const outcome = await sweepRetention(this.db, this.settings, this.holder, { force, stopping: () => this.stopped });
      this.sweeps.inc({ result: outcome.result });
      if (outcome.result === "done") {
        for (const kind of RETENTION_KINDS) this.removed.inc({ kind }, outcome.removed[kind]);
        if (Object.values(outcome.removed).some((n) => n > 0))
          this.logger.info({ removed: outcome.removed, seconds: outcome.seconds }, "retention: sweep done");
      }
      return outcome;
    } catch (error) {
      this.sweeps.inc({ result: "failed" });
      throw error;
    }
  }

  /** Stops the tries; a sweep in progress stops after its batch (one short statement). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: unknown) => this.logger.warn({ err: error }, "retention: the sweep failed; the next try is in an hour"))
        .finally(() => this.schedule(SWEEP_EVERY_MS));
    }, ms);
    this.timer.unref();
  }
}
