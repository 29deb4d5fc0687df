import { Counter, Gauge, type Registry } from "prom-client";
import type { Database } from "../db/database.js";
import type { Outcome } from "./worker.js";

/**
 * The webhook metrics: attempts by outcome (this instance's), and the
 * outbox's backlog and the age of its oldest pending delivery (the shared
 * database's: across worker processes the highest reading is kept, not a sum).
 */
export function webhookMetrics(registry: Registry, db: Database): (outcome: Outcome) => void {
  const attempts = new Counter({
    name: "webhook_delivery_attempts_total",
    help: "Webhook delivery attempts by outcome: delivered (2xx), retrying (failed, will be retried), failed (failed, no retry left).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  for (const outcome of ["delivered", "retrying", "failed"]) attempts.inc({ outcome }, 0);
  const pending = async () => {
    const [row] = await db.prisma.$queryRaw<{ backlog: number; oldest: number | null }[]>`
      SELECT count(*)::int AS backlog, extract(epoch FROM now() - min("createdAt"))::float8 AS oldest
        FROM webhook_deliveries WHERE status = 'pending'`;
    return row ?? { backlog: 0, oldest: null };
  };
  new Gauge({
    name: "webhook_outbox_backlog",
    help: "Webhook deliveries not yet delivered nor failed (due, in flight or waiting for a retry).",
    registers: [registry],
    aggregator: "max",
    async collect() {
      this.set((await pending()).backlog);
    },
  });
  new Gauge({
    name: "webhook_outbox_oldest_pending_seconds",
    help: "Age of the oldest pending webhook delivery, 0 when none is pending.",
    registers: [registry],
    aggregator: "max",
    async collect() {
      this.set((await pending()).oldest ?? 0);
    },
  });
  return (outcome) => attempts.inc({ outcome });
}
