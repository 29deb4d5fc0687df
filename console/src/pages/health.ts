import { dataTable, h } from "../dom.js";

interface Probe {
  name: string;
  path: string;
  meaning: string;
}

const PROBES: Probe[] = [
  { name: "Live", path: "livez", meaning: "the process answers" },
  { name: "Ready", path: "readyz", meaning: "the database answers within a second and the instance is not stopping" },
];

/** Health: the probes of the instance that answered (behind a load balancer, any one of them). */
export async function healthPage(main: HTMLElement): Promise<void> {
  const rows = await Promise.all(
    PROBES.map(async (probe) => {
      const started = performance.now();
      let status: string;
      let detail: string;
      try {
        const res = await fetch(probe.path, { cache: "no-store", credentials: "omit" });
        const body = (await res.json()) as Record<string, string>;
        status = res.ok ? "ok" : "failing";
        detail = res.ok
          ? Object.entries(body)
              .map(([k, v]) => `${k}: ${v}`)
              .join(", ")
          : (body.message ?? `HTTP ${res.status}`);
      } catch {
        status = "failing";
        detail = "no answer";
      }
      const ms = Math.round(performance.now() - started);
      return h(
        "tr",
        {},
        h("th", { scope: "row" }, probe.name, h("small", {}, `/${probe.path}: ${probe.meaning}`)),
        h("td", {}, h("span", { class: `badge ${status === "ok" ? "active" : "revoked"}` }, status)),
        h("td", {}, detail),
        h("td", {}, `${ms} ms`),
      );
    }),
  );
  main.replaceChildren(
    h("h1", {}, "Health"),
    dataTable("health", "Health probes", ["Probe", "Status", "Answer", "Time"], rows),
    h("p", { class: "muted" }, "Metrics for Prometheus are on the metrics port (METRICS_PORT), not here."),
  );
}
