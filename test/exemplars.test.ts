import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metrics } from "../src/service/metrics.js";
import { type Served, serveTraced, startCollector } from "./helpers/otlp.js";
import { freePort } from "./helpers/process.js";
import { type Prometheus, prometheusAvailable, startPrometheus } from "./helpers/prometheus.js";

/**
 * Exemplars (issue 53) as an operator meets them: Debian's Prometheus, exemplar storage on, scraping the
 * service's /metrics while tracing is on; from a bucket of http_request_duration_seconds to the trace of a
 * request it counted, which the collector holds.
 */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

interface Exemplars {
  seriesLabels: Record<string, string>;
  exemplars: { labels: Record<string, string>; value: string }[];
}

describe.runIf(prometheusAvailable)("exemplars, scraped by Prometheus (needs Prometheus)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "exemplars-"));
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let server: Served;
  let metricsUrl: string;
  let prometheus: Prometheus;

  beforeAll(async () => {
    collector = await startCollector();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    server = await serveTraced({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: "127.0.0.1",
    });
    prometheus = await startPrometheus(dir, [`127.0.0.1:${metricsPort}`]);
  }, 120_000);
  afterAll(async () => {
    await prometheus?.stop();
    await server?.close();
    await collector?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("when a sampled request is answered, then Prometheus keeps its trace id as an exemplar of its route's series, and the collector has the trace", async () => {
    // First a request whose caller did not sample its trace: it is counted, and is no exemplar.
    const unsampled = randomBytes(16).toString("hex");
    const listed = await request(server.url)
      .get("/api/player/get-all-players")
      .set("X-API-Key", server.key)
      .set("traceparent", `00-${unsampled}-${randomBytes(8).toString("hex")}-00`);
    expect(listed.status).toBe(200);
    const traceId = randomBytes(16).toString("hex");
    const name = `exemplar_${randomBytes(3).toString("hex")}`;
    const res = await request(server.url)
      .post("/api/inscription")
      .set("X-API-Key", server.key)
      .set("traceparent", `00-${traceId}-${randomBytes(8).toString("hex")}-01`)
      .send({ username: name });
    expect(res.status).toBe(201);

    const now = Date.now() / 1000;
    const query = `query_exemplars?query=http_request_duration_seconds_bucket&start=${Math.floor(now - 600)}&end=${Math.ceil(now + 600)}`;
    let found: Exemplars[] = [];
    const holds = (series: Exemplars[]) => series.some((s) => s.exemplars.some((e) => e.labels.trace_id === traceId));
    for (const until = Date.now() + 60_000; !holds(found) && Date.now() < until; ) {
      found = await prometheus.api<Exemplars[]>(query);
      if (!holds(found)) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const series = found.find((s) => s.exemplars.some((e) => e.labels.trace_id === traceId));
    expect(series?.seriesLabels).toMatchObject({
      __name__: "http_request_duration_seconds_bucket",
      route: "/api/inscription",
      method: "POST",
      status: "201",
      job: "community",
    });
    const exemplar = series!.exemplars.find((e) => e.labels.trace_id === traceId)!;
    // An exemplar lies in its bucket: at most the bucket's bound.
    expect(Number(exemplar.value)).toBeLessThanOrEqual(series!.seriesLabels.le === "+Inf" ? Infinity : Number(series!.seriesLabels.le));
    expect(found.flatMap((s) => s.exemplars).some((e) => e.labels.trace_id === unsampled)).toBe(false);
    // Prometheus read the OpenMetrics text without complaint.
    const { activeTargets } = await prometheus.api<{ activeTargets: { health: string; lastError: string }[] }>("targets");
    expect(activeTargets.map((t) => [t.health, t.lastError])).toEqual([["up", ""]]);
    await server.service.waitFor("the exemplar's trace at the collector", () =>
      collector.spans.some((s) => s.traceId === traceId && s.name === "POST /api/inscription"),
    );
  }, 90_000);

  it("when a scraper asks for OpenMetrics, then it is answered in it, and in Prometheus text when it asks for that", async () => {
    const open = await request(metricsUrl).get("/metrics").set("Accept", PROMETHEUS_ACCEPT);
    expect([open.status, open.headers["content-type"], open.headers.vary]).toEqual([
      200,
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
      "Accept",
    ]);
    expect(open.text).toMatch(
      /^http_request_duration_seconds_bucket\{le="[^"]+",method="POST",route="\/api\/inscription",status="201"\} 1 # \{trace_id="[0-9a-f]{32}"\} [\d.e-]+ [\d.]+$/m,
    );
    expect(open.text).toMatch(/^# TYPE rate_limit_rejections counter$/m);
    expect(open.text.endsWith("# EOF\n")).toBe(true);
    const text = await request(metricsUrl).get("/metrics").set("Accept", "text/plain");
    expect(text.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(text.text).toMatch(/^# TYPE rate_limit_rejections_total counter$/m);
    expect(text.text).not.toContain("trace_id");
  });
});

describe("the metrics' format with tracing off", () => {
  it("when tracing is off, then a scraper asking for OpenMetrics still gets the Prometheus text, as before tracing", async () => {
    const answered = await new Metrics(undefined, { processMetrics: false }).text(PROMETHEUS_ACCEPT);
    expect(answered.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(answered.body).toContain("# TYPE http_request_duration_seconds histogram");
  });
});
