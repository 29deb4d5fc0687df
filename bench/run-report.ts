/**
 * The section npm run bench writes (bench/run.ts): how the run was made, the table of every route on
 * every server with its ratios to node:http and Express, CPU per request at a glance, peak RSS, the
 * large lists; written between its markers in --out, leaving the rest of the file alone.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { loadAverage } from "./proc.js";
import type { Sample, Scenario } from "./run-scenarios.js";
import { KINDS, type Kind, type Runtime, type Target } from "./run-servers.js";
import { median } from "./stats.js";

// The section of --out this script owns: a run replaces it and leaves the rest of the file alone.
const SECTION_START = "<!-- npm run bench: start of the generated section -->";
const SECTION_END = "<!-- npm run bench: end of the generated section -->";

/** Requests a second as printed: whole above 10, two decimals below (whole lists of a large community). */
export const perSecond = (rps: number) => rps.toFixed(rps < 10 ? 2 : 0);

export interface RunReport {
  players: number;
  rounds: number;
  duration: number;
  warmup: number;
  production: boolean;
  /** The load generator's name. */
  load: string;
  loadAtStart: string;
  runtimes: Runtime[];
  targets: Target[];
  selected: Scenario[];
  /** Each load run's figures, by `${scenario}|${target id}`. */
  samples: Map<string, Sample[]>;
  peakRss: Map<string, number>;
  loadSeconds: number;
  /** The large lists' lines (--lists), or none. */
  listLines: string[];
}

/** The section, markers included. */
export function runSection(r: RunReport): string {
  const { targets, samples } = r;
  const m = (name: string, t: Target, k: keyof Sample) => median(samples.get(`${name}|${t.id}`)!.map((x) => x[k]));
  const same = (kind: Kind, t: Target) => targets.find((p) => p.kind === kind && p.runtime === t.runtime)!;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const lines = [
    SECTION_START,
    "## Servers and runtimes",
    "",
    `Run of ${new Date().toISOString().slice(0, 16)}Z (\`npm run bench -- ${process.argv.slice(2).join(" ")}\`): ${r.players} players, ` +
      (r.rounds > 0
        ? `${r.rounds} rounds of ${r.duration} s per route and server after ${r.warmup} s of warm-up each, medians of the rounds.`
        : "no autocannon rounds."),
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${r.loadAtStart} at the start ` +
      `and ${loadAverage()} at the end (other work shares the machine); PostgreSQL and ${r.load} (the load) on the same machine.`,
    `Runtimes: ${r.runtimes.map((rt) => `Node ${rt.version}`).join(", ")}. Service settings: lean = log level warn, no metrics listener, rate limits off` +
      (r.production
        ? "; production = request log at info, metrics served, both rate limits counted in Redis (never reached); the same without the request log line (log level warn); lean + rate limits in Redis = lean with both limits counted in Redis."
        : "."),
    "CPU = the server process's own user + system time per request served; DB CPU = that of the PostgreSQL backends serving its connections " +
      "(on the same cores). ×plain, ×Express = against node:http + pg, Express 5 + pg on the same runtime (req/s: higher is better; CPU: lower is better).",
  ];
  if (r.rounds > 0) {
    lines.push(
      "",
      "| route | conns | server | Node | req/s | ×plain | p50 ms | p99 ms | CPU µs/req | CPU ×plain | CPU ×Express | DB CPU µs/req | DB ×Express | unexpected |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
  }
  for (const s of r.rounds > 0 ? r.selected : []) {
    for (const t of targets) {
      const [plain, express] = [same("plain", t), same("express", t)];
      const bad = samples.get(`${s.name}|${t.id}`)!.reduce((n, x) => n + x.bad, 0);
      const cpu = m(s.name, t, "cpu");
      lines.push(
        `| ${s.name} | ${s.connections} | ${KINDS[t.kind].label} | ${t.runtime.major} | ${perSecond(m(s.name, t, "rps"))} | ${ratio(m(s.name, t, "rps"), m(s.name, plain, "rps"))} | ` +
          `${m(s.name, t, "p50")} | ${m(s.name, t, "p99")} | ${cpu.toFixed(0)} | ${ratio(cpu, m(s.name, plain, "cpu"))} | ${ratio(cpu, m(s.name, express, "cpu"))} | ` +
          `${m(s.name, t, "dbCpu").toFixed(0)} | ${ratio(m(s.name, t, "dbCpu"), m(s.name, express, "dbCpu"))} | ${bad} |`,
      );
    }
  }
  if (r.rounds > 0)
    lines.push(
      "",
      "CPU µs per request at a glance:",
      "",
      `| route | ${targets.map((t) => `${KINDS[t.kind].label}, Node ${t.runtime.major}`).join(" | ")} |`,
      `|---|${targets.map(() => "---|").join("")}`,
    );
  for (const s of r.rounds > 0 ? r.selected : []) lines.push(`| ${s.name} | ${targets.map((t) => m(s.name, t, "cpu").toFixed(0)).join(" | ")} |`);
  lines.push(
    "",
    `Peak RSS over the run (MB): ${targets.map((t) => `${KINDS[t.kind].label} on ${t.runtime.major}: ${(r.peakRss.get(t.id) ?? 0).toFixed(0)}`).join("; ")}. ` +
      `Import of the community: ${r.loadSeconds.toFixed(1)} s.`,
    ...r.listLines,
    SECTION_END,
  );
  return lines.join("\n");
}

/** Writes `section` into `out` in place of the one there, or at its end. */
export function writeSection(out: string, section: string): void {
  const previous = existsSync(out) ? readFileSync(out, "utf8") : "";
  const [before, rest] = previous.includes(SECTION_START) ? previous.split(SECTION_START) : [previous, undefined];
  const after = rest?.includes(SECTION_END) ? rest.slice(rest.indexOf(SECTION_END) + SECTION_END.length) : "";
  writeFileSync(out, `${before.trimEnd()}${before.trim() ? "\n\n" : ""}${section}${after.trimEnd() ? after : ""}\n`);
}
