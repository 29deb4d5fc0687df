import type { Metric } from "prom-client";

type Labels = { method: string; route: string; status: string };

/** A line of the histogram as prom-client's registry reads it from its own metrics. */
interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  value: number;
  metricName: string;
  exemplar?: Exemplar | null;
}

/** The last sampled trace a bucket counted: written after its line in OpenMetrics (`# {trace_id="…"} 0.0042 1764763200.123`). */
interface Exemplar {
  labelSet: { trace_id: string };
  value: number;
  timestamp: number;
}

interface Exported {
  name: string;
  help: string;
  type: "histogram";
  values: Value[];
  aggregator: "sum";
}

/** One series: its labels, the observations per bucket (not cumulated), their sum and count. */
interface Series {
  labels: Labels;
  counts: Float64Array;
  sum: number;
  count: number;
  /** Per bucket (the last is +Inf), once a traced request was observed. */
  exemplars?: (Exemplar | undefined)[];
}

/**
 * A Prometheus histogram of request durations by method, route and status, read by prom-client's registry
 * as one of its own (test/request-durations.test.ts holds its text, JSON and exemplars to prom-client's
 * Histogram). prom-client's Histogram hashes a key of the labels on every observation, 4–5 µs of a point
 * read (bench/results.md); here a series is found through maps keyed by what the request already holds.
 */
export class RequestDurations {
  readonly type = "histogram" as const;
  readonly aggregator = "sum" as const;
  /** route → method → status → series. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  /** In the order they first appeared, as prom-client lists its series. */
  private readonly series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** Counts one answer; `traceId`, a sampled trace's id, becomes its bucket's exemplar (tracing on: core/tracing.ts). */
  observe(method: string, route: string, status: number, seconds: number, traceId?: string): void {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map<string, Map<number, Series>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, Series>()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.series.push(series);
    }
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    if (i < bounds.length) series.counts[i]! += 1;
    if (traceId !== undefined) {
      series.exemplars ??= Array.from({ length: bounds.length + 1 }, () => undefined);
      series.exemplars[i] = { labelSet: { trace_id: traceId }, value: seconds, timestamp: Date.now() / 1000 };
    }
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry writes as text: per series its cumulative buckets, +Inf, sum and count (prom-client's layout). */
  getForPromString(): Promise<Exported> {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    // prom-client's exemplar field: the bucket's or null on the bucket lines, absent on sum and count.
    const value = (labels: Record<string, string | number>, v: number, metricName: string, sharedLabels: Labels, exemplar?: Exemplar | null): Value => ({
      labels,
      sharedLabels,
      value: v,
      metricName,
      exemplar,
    });
    for (const s of this.series) {
      let cumulated = 0;
      this.bounds.forEach((le, i) => {
        cumulated += s.counts[i]!;
        values.push(value({ le }, cumulated, bucket, s.labels, s.exemplars?.[i] ?? null));
      });
      values.push(value({ le: "+Inf" }, s.count, bucket, s.labels, s.exemplars?.[this.bounds.length] ?? null));
      values.push(value({}, s.sum, `${this.name}_sum`, s.labels));
      values.push(value({}, s.count, `${this.name}_count`, s.labels));
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** The same values with each series' labels on every line (registry.getMetricsAsJSON, the cluster's aggregation). */
  async get(): Promise<Exported> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.byRoute.clear();
    this.series.length = 0;
  }

  /** This histogram as the registry's metric type (registerMetric). */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}
