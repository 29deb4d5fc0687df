import { type Metric, type OpenMetricsContentType, Registry } from "prom-client";

/**
 * The OpenMetrics text of a registry kept in Prometheus text: the format that carries exemplars
 * (https://github.com/prometheus/OpenMetrics/blob/main/specification/OpenMetrics.md#exemplars).
 * prom-client writes it from a registry created for it, so each scrape registers views of the
 * registry's metrics in a new one; a view names a counter's family without `_total` (the samples
 * keep it), where prom-client's own OpenMetrics output would rename the metric itself.
 */
export async function openMetricsText(registry: Registry): Promise<string> {
  const open = new Registry<OpenMetricsContentType>();
  open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const { name } of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(name);
    if (metric) open.registerMetric(viewOf(metric));
  }
  return open.metrics();
}

/** What a metric gives the registry to write: its family name and type, with its help and values. */
type Read = () => Promise<{ name: string; type: unknown }>;

function viewOf(metric: Metric): Metric {
  // Histograms (ours and prom-client's) write their text from getForPromString, with labels shared per series.
  const own = (metric as { getForPromString?: Read }).getForPromString;
  const read: Read = own ? own.bind(metric) : () => metric.get();
  const view = {
    name: (metric as unknown as { name: string }).name,
    async getForPromString() {
      const data = await read();
      return data.type === "counter" ? { ...data, name: data.name.replace(/_total$/, "") } : data;
    },
  };
  return view as unknown as Metric;
}

/**
 * Whether a scraper's Accept asks for OpenMetrics at least as much as for the Prometheus text
 * (Prometheus sends `application/openmetrics-text;version=1.0.0,…,text/plain;version=0.0.4;q=0.5,*\/*;q=0.1`).
 */
export function acceptsOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let open = 0;
  let text = 0;
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    const q = Number(params.find((p) => p.startsWith("q="))?.slice(2) ?? 1);
    if (!Number.isFinite(q)) continue;
    if (type === "application/openmetrics-text") open = Math.max(open, q);
    else if (type === "text/plain") text = Math.max(text, q);
  }
  return open > 0 && open >= text;
}
