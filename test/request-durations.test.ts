import { AggregatorRegistry, Counter, Histogram, type OpenMetricsContentType, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { acceptsOpenMetrics, openMetricsText } from "../src/service/open-metrics.js";
import { RequestDurations } from "../src/service/request-durations.js";

const NAME = "http_request_duration_seconds";
const HELP = "Time from request to the end of its answer.";
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Observations across series first seen in a mixed order, on bounds, between them, at 0 and past the last. */
const OBSERVED: [method: string, route: string, status: number, seconds: number][] = [
  ["GET", "/api/player/get-player-by-nick", 200, 0.0012],
  ["GET", "/livez", 200, 0],
  ["GET", "/api/player/get-player-by-nick", 404, 0.001],
  ["POST", "/api/website/create-reward-log", 201, 0.0025],
  ["GET", "/api/player/get-player-by-nick", 200, 0.7],
  ["GET", "unmatched", 404, 12],
  ["GET", "/livez", 200, 10],
  ["HEAD", "/api/player/get-player-by-nick", 200, 0.03],
  ["GET", "/api/player/get-player-by-nick", 200, 0.0049],
];

/** The same observations in prom-client's own Histogram and in RequestDurations, each in a registry of its own. */
function both(observed = OBSERVED): { theirs: Registry; ours: Registry } {
  const theirs = new Registry();
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ["method", "route", "status"], buckets: BUCKETS, registers: [theirs] });
  const ours = new Registry();
  const durations = new RequestDurations(NAME, HELP, BUCKETS);
  ours.registerMetric(durations.asMetric());
  for (const [method, route, status, seconds] of observed) {
    histogram.observe({ method, route, status: String(status) }, seconds);
    durations.observe(method, route, status, seconds);
  }
  return { theirs, ours };
}

describe("request durations (the metrics' histogram)", () => {
  it("when the same requests are observed, then /metrics shows the same text as prom-client's Histogram, line for line", async () => {
    const { theirs, ours } = both();
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    // What a dashboard reads: cumulative buckets, +Inf, sum and count per series.
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/player/get-player-by-nick",status="200"} 2');
    expect(text).toContain('http_request_duration_seconds_bucket{le="+Inf",method="GET",route="unmatched",status="404"} 1');
    expect(text).toContain('http_request_duration_seconds_bucket{le="10",method="GET",route="unmatched",status="404"} 0');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/player/get-player-by-nick",status="200"} 3');
  });

  it("when a cluster's primary adds up its workers, then the sums are those of prom-client's Histogram", async () => {
    const workers = async (make: () => Registry) => AggregatorRegistry.aggregate([await make().getMetricsAsJSON(), await make().getMetricsAsJSON()]).metrics();
    const ours = await workers(() => both().ours);
    expect(ours).toBe(await workers(() => both().theirs));
    expect(ours).toContain('http_request_duration_seconds_count{method="GET",route="/livez",status="200"} 4');
  });

  it("when the registry is reset, then no series is left, and the next observation starts a series from zero", async () => {
    const { ours } = both();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
    const again = both([["GET", "/livez", 200, 0.002]]);
    const durations = ours.getSingleMetric(NAME) as unknown as RequestDurations;
    durations.observe("GET", "/livez", 200, 0.002);
    expect(await ours.metrics()).toBe(await again.theirs.metrics());
  });

  it("when requests carry sampled traces, then OpenMetrics shows each bucket's last trace as its exemplar, as prom-client's Histogram does", async () => {
    const traced = OBSERVED.map((o, i) => [...o, i % 3 === 2 ? undefined : `${String(i).padStart(2, "0")}`.repeat(16)] as const);
    const theirs = new Registry<OpenMetricsContentType>();
    theirs.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const histogram = new Histogram<string>({
      name: NAME,
      help: HELP,
      labelNames: ["method", "route", "status"],
      buckets: BUCKETS,
      registers: [theirs],
      enableExemplars: true,
    });
    const ours = new Registry();
    const durations = new RequestDurations(NAME, HELP, BUCKETS);
    ours.registerMetric(durations.asMetric());
    for (const registers of [[theirs], [ours]]) new Counter({ name: "rate_limit_rejections_total", help: "Answered 429.", registers }).inc(2);
    for (const [method, route, status, seconds, traceId] of traced) {
      histogram.observe({ labels: { method, route, status: String(status) }, value: seconds, exemplarLabels: traceId ? { trace_id: traceId } : {} });
      durations.observe(method, route, status, seconds, traceId);
    }
    const at = (text: string) => text.replace(/ \d+(\.\d+)?$/gm, (t) => (/\d{10}/.test(t) ? " <time>" : t));
    const text = await openMetricsText(ours);
    expect(at(text)).toBe(at(await theirs.metrics()));
    // 0.7 s, the fifth observation, is the 1 s bucket's exemplar; an untraced answer leaves its bucket without one.
    expect(text).toContain(`${NAME}_bucket{le="1",method="GET",route="/api/player/get-player-by-nick",status="200"} 3 # {trace_id="${"04".repeat(16)}"} 0.7 `);
    expect(text).toMatch(/_bucket\{le="0.001",method="GET",route="\/api\/player\/get-player-by-nick",status="404"\} 1\n/);
    expect(text).toMatch(/^# TYPE rate_limit_rejections counter\nrate_limit_rejections_total 2$/m);
    expect(text.endsWith("# EOF\n")).toBe(true);
    // The registry itself stays in Prometheus text, names unchanged, without exemplars.
    const plain = await ours.metrics();
    expect(plain).toContain("# TYPE rate_limit_rejections_total counter\nrate_limit_rejections_total 2");
    expect(plain).not.toContain("trace_id");
  });

  it("when a scraper states what it accepts, then OpenMetrics is chosen only when asked for at least as much as the text format", () => {
    const prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    expect(
      [prometheus, "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5", "application/openmetrics-text;q=0", "*/*", undefined].map(
        acceptsOpenMetrics,
      ),
    ).toEqual([true, false, false, false, false]);
  });
});
