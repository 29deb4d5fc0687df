import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/**
 * At the end of `npm test`: the slowest files of the run, with their times,
 * then which tests were skipped, for want of what, and how to run them. A
 * suite's condition is not known to the reporter: the reason is read from its
 * title (the suites that need Chromium, nginx, PgBouncer, Prometheus, Redis or PostgreSQL
 * say so) and from this run's database.
 */
const HOW = {
  postgres: ["need PostgreSQL", "DATABASE_URL=postgresql://USER@HOST:5432/postgres npm test (each file makes and drops a database of its own)"],
  redis: ["need Redis", "REDIS_TEST_URL=redis://HOST:6379 npm test (with DATABASE_URL for the multi-instance ones)"],
  chromium: ["need Chromium", "apt-get install chromium, or CHROMIUM_PATH=/path/to/chromium npm test"],
  nginx: ["need nginx", "apt-get install nginx-light, or NGINX_PATH=/path/to/nginx npm test"],
  pgbouncer: [
    "need PgBouncer",
    "apt-get install pgbouncer, or PGBOUNCER_PATH=/path/to/pgbouncer npm test (with DATABASE_URL; REQUIRE_PGBOUNCER=1 fails without it)",
  ],
  prometheus: ["need Prometheus", "apt-get install --no-install-recommends prometheus, or PROMETHEUS_PATH=/path/to/prometheus npm test"],
  embedded: ["run on the embedded database only", "npm test without DATABASE_URL"],
} as const;

export default class SkipSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    slowest(modules);
    skipped(modules);
  }
}

const SLOWEST = 5;

function slowest(modules: ReadonlyArray<TestModule>): void {
  const times = modules
    .map((m) => ({ file: path.relative(process.cwd(), m.moduleId), ms: m.diagnostic().duration }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST);
  if (times.length < 2) return;
  const lines = [`\nSlowest files (time in their tests and hooks):`, ...times.map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.file}`)];
  process.stdout.write(`${lines.join("\n")}\n`);
}

function skipped(modules: ReadonlyArray<TestModule>): void {
  const onPostgres = Boolean(process.env.DATABASE_URL?.trim());
  const groups = new Map<keyof typeof HOW, { count: number; files: Set<string> }>();
  for (const module of modules) {
    for (const test of module.children.allTests("skipped")) {
      const name = test.fullName;
      const reason: keyof typeof HOW = /Chromium/.test(name)
        ? "chromium"
        : /nginx/.test(name)
          ? "nginx"
          : /Prometheus/.test(name)
            ? "prometheus"
            : onPostgres && /PgBouncer/.test(name)
              ? "pgbouncer"
              : !onPostgres && (/PostgreSQL/.test(name) || !/Redis/.test(name))
                ? "postgres"
                : /Redis/.test(name)
                  ? "redis"
                  : "embedded";
      const group = groups.get(reason) ?? { count: 0, files: new Set<string>() };
      group.count++;
      group.files.add(path.basename(module.moduleId).replace(/\.test\.ts$/, ""));
      groups.set(reason, group);
    }
  }
  if (groups.size === 0) return;
  const total = [...groups.values()].reduce((n, g) => n + g.count, 0);
  const lines = [`\nSkipped ${total} test(s), for what this run does not have:`];
  for (const [reason, { count, files }] of groups) {
    const [what, how] = HOW[reason];
    lines.push(`  ${count} ${what} (${[...files].join(", ")}): ${how}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
