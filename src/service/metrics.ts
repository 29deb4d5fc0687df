import { createServer, type Server } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { tracing } from "../core/tracing.js";
import type { Database } from "../db/database.js";
import type { Bulkhead } from "../limits/bulkhead.js";
import { acceptsOpenMetrics, openMetricsText } from "./open-metrics.js";
import { RequestDurations } from "./request-durations.js";

/**
 * The service's Prometheus metrics, in a registry of its own (one per app, so
 * tests and several apps in one process do not mix their counts).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestDurations;
  private readonly rejections: Counter<"kind">;
  private readonly countingLocally: Gauge;

  constructor(db: Database | undefined, options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestDurations(
      "http_request_duration_seconds",
      "Time from request to the end of its answer, by route (the declared path, not the URL) and status.",
      // From a cached point read (~1 ms) to a full list under load (seconds).
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    );
    this.registry.registerMetric(this.requests.asMetric());
    this.rejections = new Counter({
      name: "rate_limit_rejections_total",
      help: "Requests answered 429: kind=user (an API user over its budget), kind=address (an address over its failed-authentication budget).",
      labelNames: ["kind"],
      registers: [this.registry],
    });
    // Both series exist from the start, so a dashboard shows 0 rather than nothing.
    for (const kind of ["user", "address"]) this.rejections.inc({ kind }, 0);
    this.countingLocally = new Gauge({
      name: "rate_limit_counting_locally",
      help: "1 while Redis (REDIS_URL) is unreachable and this instance counts the rate limits in its own memory, else 0.",
      registers: [this.registry],
    });
    this.countingLocally.set(0);
    if (tracing.on) this.tracingDrops();
    const pool = db?.poolStats();
    if (db && pool) {
      const stat = this.readGauge.bind(this);
      stat("db_pool_max_connections", "Configured size of the PostgreSQL pool (DB_POOL_MAX).", () => db.poolStats()?.max ?? 0);
      stat("db_pool_connections", "Open connections to PostgreSQL, busy or idle.", () => db.poolStats()?.total ?? 0);
      stat("db_pool_idle_connections", "Open connections not in use.", () => db.poolStats()?.idle ?? 0);
      stat("db_pool_waiting_requests", "Queries waiting for a free connection.", () => db.poolStats()?.waiting ?? 0);
    }
  }

  /** The full lists in progress and waiting (HEAVY_LISTS_AT_ONCE): slots taken for long, or a queue, mean lists are starved. */
  watchHeavyLists(bulkhead: Bulkhead): void {
    const gauge = this.readGauge.bind(this);
    gauge("heavy_lists_in_progress", "Full lists holding a slot (built or being sent), at most HEAVY_LISTS_AT_ONCE.", () => bulkhead.state.active);
    gauge("heavy_lists_waiting", "Full lists waiting for a slot (at most HEAVY_LIST_WAIT_MS each).", () => bulkhead.state.waiting);
  }

  /** tracing_spans_dropped_total: the spans tracing lost (core/tracing.ts), counted by the SDK's batch processor. */
  private tracingDrops(): void {
    const reported = { queue_full: 0, export_failed: 0 };
    new Counter({
      name: "tracing_spans_dropped_total",
      help: "Spans not exported: reason=queue_full (OTEL_BSP_MAX_QUEUE_SIZE was reached), reason=export_failed (the collector did not take them).",
      labelNames: ["reason"],
      registers: [this.registry],
      collect() {
        for (const reason of ["queue_full", "export_failed"] as const) {
          this.inc({ reason }, tracing.dropped[reason] - reported[reason]);
          reported[reason] = tracing.dropped[reason];
        }
      },
    });
  }

  /** A gauge read when scraped, registered once: asked for again, the first one stays. */
  private readGauge(name: string, help: string, read: () => number): void {
    if (this.registry.getSingleMetric(name)) return;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * Times a request once answered (request-context.ts calls it); the route label is the declared path, so URLs with
   * values do not explode the series. `traceId`, the request's trace when sampled, is kept as its bucket's exemplar.
   */
  requestFinished(req: Request, res: Response, seconds: number, traceId?: string): void {
    // A compiled route names itself (http/register-routes.ts); other routers' routes are named by Express.
    const named = (res.locals as { route?: string }).route;
    const route = named ?? (req.route ? `${mountOf(res.locals)}${String((req.route as { path: unknown }).path)}` : "unmatched");
    this.requests.observe(req.method, route, res.statusCode, seconds, traceId);
  }

  /** Marks where a router is mounted (req.baseUrl is only right while routing), for the route label. */
  static mountPoint(): RequestHandler {
    return (req, res, next) => {
      (res.locals as { mount?: string }).mount = req.baseUrl;
      next();
    };
  }

  rateLimited(kind: "user" | "address"): void {
    this.rejections.inc({ kind });
  }

  rateLimitCountingLocally(locally: boolean): void {
    this.countingLocally.set(locally ? 1 : 0);
  }

  /** The metrics in the scraper's format: OpenMetrics, with exemplars, when tracing is on and `accept` asks for it; else Prometheus text. */
  async text(accept?: string): Promise<{ contentType: string; body: string }> {
    if (tracing.on && acceptsOpenMetrics(accept)) return { contentType: Registry.OPENMETRICS_CONTENT_TYPE, body: await openMetricsText(this.registry) };
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

function mountOf(locals: Record<string, unknown>): string {
  return typeof locals.mount === "string" ? locals.mount : "";
}

/**
 * GET /metrics on a listener of its own: kept off the API's port so that it
 * is not public by accident (METRICS_HOST defaults to 127.0.0.1).
 */
export function serveMetrics(metrics: Pick<Metrics, "text">): Server {
  return createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found: the metrics are at GET /metrics\n");
      return;
    }
    metrics.text(req.headers.accept).then(
      ({ contentType, body }) => {
        res.writeHead(200, { "Content-Type": contentType, Vary: "Accept" }).end(req.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" }).end(`metrics failed: ${String(error)}\n`);
      },
    );
  });
}
