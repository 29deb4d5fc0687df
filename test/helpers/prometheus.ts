import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort, outputOf, spawnOwned } from "./process.js";

/**
 * Debian's Prometheus (the `prometheus` package) scraping test instances, with exemplar storage on, as an
 * operator runs it to get from a slow bucket to its trace. .ci/run installs it and sets REQUIRE_PROMETHEUS,
 * which makes its absence a failure.
 */
export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? "/usr/bin/prometheus";
export const prometheusAvailable = existsSync(PROMETHEUS);
if (!prometheusAvailable && process.env.REQUIRE_PROMETHEUS) throw new Error(`No Prometheus at ${PROMETHEUS}, and REQUIRE_PROMETHEUS is set (as in CI)`);

export interface Prometheus {
  url: string;
  /** GET on its HTTP API (`/api/v1/…`), the `data` of a successful answer. */
  api<T>(pathAndQuery: string): Promise<T>;
  stop(): Promise<void>;
}

/** Starts Prometheus with its files in `dir`, scraping `targets` (host:port) every second; resolves once it is ready, within 60 s. */
export async function startPrometheus(dir: string, targets: readonly string[]): Promise<Prometheus> {
  const port = await freePort();
  const config = path.join(dir, "prometheus.yml");
  writeFileSync(
    config,
    `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: community\n    static_configs:\n      - targets: [${targets.map((t) => `"${t}"`).join(", ")}]\n`,
  );
  const child = spawnOwned(PROMETHEUS, [
    `--config.file=${config}`,
    `--storage.tsdb.path=${path.join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--enable-feature=exemplar-storage",
  ]);
  const output = outputOf(child);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await output;
  };
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Prometheus exited: ${(await output).stderr}`);
    if (
      (await fetch(`${url}/-/ready`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break;
    if (Date.now() > until) {
      await stop();
      throw new Error(`Prometheus was not ready within 60 s: ${existsSync(config) ? readFileSync(config, "utf8") : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async api<T>(pathAndQuery: string) {
      const answer = (await (await fetch(`${url}/api/v1/${pathAndQuery}`)).json()) as { status: string; data: T; error?: string };
      if (answer.status !== "success") throw new Error(`Prometheus: ${answer.error ?? answer.status}`);
      return answer.data;
    },
    stop,
  };
}
