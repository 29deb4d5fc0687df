// Runs the Java client's tests against live servers of this repository on PostgreSQL:
//   node clients/java/test-live.mjs
// Builds the service (if dist/ is missing) and the client, creates a fresh database (dropped at the
// end), starts four servers on 127.0.0.1 — the main one, one with a tiny rate limit (for 429), one
// whose database connection is cut once it has started (for 503), one that traces to an OTLP/HTTP
// collector kept here (its spans readable at GET /spans?trace=ID) — creates the API users of groups
// A–D, imports the seed data, and runs JUnit with the addresses and keys in its environment. Each test
// fails after a minute (src/test/resources/junit-platform.properties), and a JVM still running after
// JAVA_TESTS_TIMEOUT_S (600 by default) is killed and the run fails: CI never hangs on it.
// DATABASE_URL (or CI_POSTGRES_URL) names the server; the default is the local one.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const pgUrl = process.env.CI_POSTGRES_URL ?? process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const database = `javaclient_${process.pid}_${Date.now()}`;
const dbUrl = (() => {
  const u = new URL(pgUrl);
  u.pathname = `/${database}`;
  return u.toString();
})();
const JUNIT = process.env.JUNIT_JARS ?? "/usr/share/java";
const GSON = process.env.GSON_JAR ?? "/usr/share/java/gson.jar";
const RATE_LIMIT = 3;
/** The longest the JUnit run may take (each test has its own minute, junit-platform.properties): past it the JVM is killed. */
const JUNIT_TIMEOUT_MS = Number(process.env.JAVA_TESTS_TIMEOUT_S ?? 600) * 1000;

const servers = [];
let proxy;
let collector;
let created = false;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: repo, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited with ${r.status}${r.stderr ? `: ${r.stderr}` : ""}`);
  return r.stdout;
}

async function admin(sql) {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

async function startServer(name, databaseUrl, extraEnv = {}) {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    HOST: "127.0.0.1",
    PORT: String(port),
    METRICS_PORT: "off",
    LOG_LEVEL: "error",
    NODE_ENV: "production",
    WEB_CONCURRENCY: "1",
    REDIS_URL: "",
    DATABASE_READ_URL: "",
    ...extraEnv,
  };
  const child = spawn(process.execPath, ["dist/main.js"], { cwd: repo, env, stdio: ["ignore", "inherit", "inherit"] });
  servers.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server ${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return `${url}/api`;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server ${name} did not become ready`);
}

/** A TCP relay to PostgreSQL that can be cut: the 503 server reaches its database through it. */
function startProxy(target) {
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: server.address().port,
        cut: () =>
          new Promise((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      }),
    ),
  );
}

/**
 * The JVM, killed after JUNIT_TIMEOUT_MS; spawned, not spawnSync'd, so that this process goes on serving
 * the collector the traced server exports to and the tests read.
 */
function java(args, { env }) {
  return new Promise((resolve) => {
    const child = spawn("java", args, { cwd: here, stdio: "inherit", env });
    servers.push(child);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, JUNIT_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ status: null, error });
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ status: code, error: timedOut ? { code: "ETIMEDOUT" } : undefined });
    });
  });
}

/** An OTLP/HTTP (JSON) collector: the spans it is sent, by trace, at GET /spans?trace=ID (name, spanId, parentSpanId). */
function startCollector() {
  const spans = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://collector");
    if (req.method === "GET" && url.pathname === "/spans") {
      const trace = url.searchParams.get("trace");
      const found = spans.filter((s) => s.traceId === trace).map(({ name, spanId, parentSpanId }) => ({ name, spanId, parentSpanId }));
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(found));
      return;
    }
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      for (const r of JSON.parse(body).resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spans.push(...(s.spans ?? []));
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, server })));
}

async function cleanUp() {
  for (const child of servers) if (child.exitCode === null) child.kill("SIGTERM");
  await Promise.all(servers.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null)));
  await proxy?.cut().catch(() => {});
  collector?.server.close();
  if (created) await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((e) => console.error(`drop ${database}: ${e.message}`));
}

let exitCode = 1;
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => cleanUp().finally(() => process.exit(130)));
try {
  const started = Date.now();
  const step = (what) => console.log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (!existsSync(path.join(repo, "dist/main.js"))) run("npm", ["run", "--silent", "build"], { stdio: "inherit" });
  run("bash", [path.join(here, "build.sh"), "--tests"], { stdio: "inherit" });
  step("built");

  await admin(`CREATE DATABASE "${database}"`);
  created = true;
  const main = await startServer("main", dbUrl);
  const cli = (...args) =>
    run(process.execPath, ["dist/cli/main.js", ...args], {
      env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  cli("import", path.join(here, "src/test/resources/seed.json"));
  // The first start created user-A and printed its key; a fresh one from the operator command, the others
  // through the API (faster than one process each).
  const keys = { A: cli("user", "rotate", "user-A") };
  const register = async (username) => {
    const res = await fetch(`${main}/inscription`, {
      method: "POST",
      headers: { "X-API-Key": keys.A, "Content-Type": "application/json" },
      body: JSON.stringify({ username }),
    });
    if (res.status !== 201) throw new Error(`registering ${username}: ${res.status} ${await res.text()}`);
    return (await res.json()).apiKey;
  };
  for (const g of ["B", "C", "D"]) keys[g] = await register(`user-${g}`);
  const limitedKey = await register("user_A");

  proxy = await startProxy(new URL(dbUrl));
  const proxied = new URL(dbUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(proxy.port);
  collector = await startCollector();
  const [limited, unavailable, traced] = await Promise.all([
    startServer("rate-limited", dbUrl, { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) }),
    startServer("database-cut", proxied.toString(), { DB_CONNECT_TIMEOUT_MS: "500", DB_STATEMENT_TIMEOUT_MS: "1000" }),
    startServer("traced", dbUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "50" }),
  ]);
  await proxy.cut();
  step("servers ready");

  const classpath = ["build/test-classes", "build/client.jar", GSON, "src/test/resources"].join(":");
  const junit = await java(
    [
      "-jar",
      path.join(JUNIT, "junit-platform-console-standalone.jar"),
      "--disable-banner",
      "--disable-ansi-colors",
      "--details=tree",
      "--fail-if-no-tests",
      // The live tests skip themselves without COMMUNITY_API_URL (for mvn install); here they must run, or fail.
      "--config=junit.jupiter.conditions.deactivate=org.junit.*EnabledIfEnvironmentVariableCondition",
      "--class-path",
      classpath,
      "--scan-class-path",
      "build/test-classes",
    ],
    {
      env: {
        ...process.env,
        COMMUNITY_API_URL: main,
        COMMUNITY_API_RATE_LIMITED_URL: limited,
        COMMUNITY_API_RATE_LIMIT: String(RATE_LIMIT),
        COMMUNITY_API_UNAVAILABLE_URL: unavailable,
        COMMUNITY_API_TRACED_URL: traced,
        COMMUNITY_OTLP_SPANS_URL: `${collector.url}/spans`,
        COMMUNITY_API_KEY_A: keys.A,
        COMMUNITY_API_KEY_B: keys.B,
        COMMUNITY_API_KEY_C: keys.C,
        COMMUNITY_API_KEY_D: keys.D,
        COMMUNITY_API_KEY_LIMITED: limitedKey,
      },
    },
  );
  if (junit.error?.code === "ETIMEDOUT") {
    console.error(`\nJAVA CLIENT TESTS HUNG: the JVM was killed after ${JUNIT_TIMEOUT_MS / 1000} s (JAVA_TESTS_TIMEOUT_S); see the last test started above\n`);
  } else if (junit.error) {
    console.error(`java: ${junit.error.message}`);
  }
  exitCode = junit.status ?? 1;
  console.log(`java client tests: ${exitCode === 0 ? "passed" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (e) {
  console.error(e);
} finally {
  await cleanUp();
}
process.exit(exitCode);
