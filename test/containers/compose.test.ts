import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureStandIns, PODMAN, PODMAN_FLAGS, podman, podmanAvailable, root, run, until } from "./podman.js";

/**
 * compose.yaml as docs/OPERATIONS.md ("Containers") has an operator bring it up: the block marked to be run
 * by this file, line by line, in a copy of the repository's files (a fresh clone's, with the .env the
 * block writes), with podman-compose (Debian's) where it says `docker compose`, and stand-ins for
 * postgres:15, redis:7 and nginx:1.27-alpine (stand-ins.sh says what they are and are not). Then the
 * rolling restart of "Restart each instance in turn", podman in docker's place, with reads through nginx
 * all along.
 *
 * What podman-compose 1.0 does not do as Docker Compose does, and this test does in its place:
 * - it starts the services in order but does not wait for `condition: service_healthy`: the api replicas
 *   may meet a PostgreSQL still initialising, fail, and be restarted (`restart: unless-stopped`), so the test
 *   waits until both replicas answer /readyz before the lines after `up`;
 * - podman runs health checks from systemd timers, which these machines lack: the test runs each
 *   replica's HEALTHCHECK once, as the engine would;
 * - it ignores the top-level `name:`: the project is named after its folder, here `game-community-api` too.
 * podman itself runs with runc and explicit limits (containers.conf below), as everywhere here, and builds
 * in Docker's image format, which keeps the HEALTHCHECK.
 */
const COMPOSE = process.env.PODMAN_COMPOSE_PATH ?? "podman-compose";
const composeAvailable = podmanAvailable && spawnSync(COMPOSE, ["version"], { stdio: "ignore" }).status === 0;
if (podmanAvailable && !composeAvailable && process.env.REQUIRE_PODMAN)
  throw new Error(`REQUIRE_PODMAN is set, and ${COMPOSE} is not installed (apt-get install podman-compose)`);

const DOC = "docs/OPERATIONS.md";
const MARK = /<!-- run by test\/containers\/compose\.test\.ts[^>]*-->\n```sh\n([\s\S]*?)^```$/m;
const docText = readFileSync(path.join(root, DOC), "utf8");
const lines =
  MARK.exec(docText)?.[1]
    ?.split("\n")
    .filter((l) => l.trim() && !l.trim().startsWith("#")) ?? [];
/** The rolling restart of the api replicas ("Restart each instance in turn"), run whole, under load. */
const RESTART_MARK = /<!-- run by test\/containers\/compose\.test\.ts under load[^>]*-->\n```sh\n([\s\S]*?)^```$/m;
const restartScript = RESTART_MARK.exec(docText)?.[1] ?? "";
let keyA: string | undefined;

let parent: string;
let project: string;
let env: NodeJS.ProcessEnv;

const LB = "http://127.0.0.1:3000";
const replicas = ["game-community-api_api_1", "game-community-api_api_2"];

/** One line of the block, as the operator's shell would run it, `docker compose` being podman-compose. */
const shell = (line: string) => run("bash", ["-o", "pipefail", "-c", line.replaceAll("docker compose", COMPOSE)], { cwd: project, env });

/** What a replica's own listener answers, asked from inside its container. */
async function inside(container: string, url: string): Promise<{ status: number; text: string } | undefined> {
  const script = `fetch(${JSON.stringify(url)}).then(async (r) => console.log(JSON.stringify({ status: r.status, text: await r.text() })), () => process.exit(1))`;
  const result = await podman("exec", container, "node", "-e", script);
  return result.code === 0 ? (JSON.parse(result.stdout) as { status: number; text: string }) : undefined;
}

/** Whether a new process in the container connects to host:port within 3 s. */
async function reaches(container: string, host: string, port: number): Promise<boolean> {
  const script = `const s = require("node:net").connect(${port}, ${JSON.stringify(host)}); setTimeout(() => process.exit(1), 3000); s.on("connect", () => process.exit(0)).on("error", () => process.exit(1));`;
  return (await run(PODMAN, [...PODMAN_FLAGS, "exec", container, "node", "-e", script], { timeoutMs: 60_000 }).catch(() => ({ code: 1 }))).code === 0;
}

/** A replica's count of 200s on one route, from its /metrics. */
async function served(container: string, route: string): Promise<number> {
  const metrics = await inside(container, "http://127.0.0.1:9464/metrics");
  const line = metrics?.text.split("\n").find((l) => l.startsWith(`http_request_duration_seconds_count{method="GET",route="${route}",status="200"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe.runIf(composeAvailable)("compose.yaml brought up as OPERATIONS.md says, with podman-compose", () => {
  beforeAll(async () => {
    expect(lines.length, `the block of ${DOC} marked for this test`).toBeGreaterThan(3);
    // The load balancer publishes 3000, as the docs say: a server of one's own there would answer in its place.
    const free = await new Promise<boolean>((resolve) => {
      const probe = net
        .createServer()
        .once("error", () => resolve(false))
        .listen(3000, "0.0.0.0", () => probe.close(() => resolve(true)));
    });
    expect(free, "port 3000 is taken on this machine: compose.yaml publishes the load balancer there").toBe(true);
    await ensureStandIns();
    parent = mkdtempSync(path.join(tmpdir(), "compose-"));
    project = path.join(parent, "game-community-api");
    mkdirSync(project);
    const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
    for (const file of tracked) cpSync(path.join(root, file), path.join(project, file), { recursive: true });
    writeFileSync(
      path.join(parent, "containers.conf"),
      '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n',
    );
    // BUILDAH_FORMAT: podman builds OCI images by default, which have no HEALTHCHECK; Docker's format keeps it.
    env = { ...process.env, CONTAINERS_CONF: path.join(parent, "containers.conf"), BUILDAH_FORMAT: "docker" };
  }, 1_200_000);

  afterAll(async () => {
    if (project) {
      // The containers with their anonymous volumes (the image's /data) first: podman-compose's down leaves those, and its network.
      const ids = (await podman("ps", "-a", "-q", "--filter", "label=io.podman.compose.project=game-community-api")).stdout.split("\n").filter(Boolean);
      if (ids.length) await podman("rm", "-f", "-v", "-t", "0", ...ids);
      await run(COMPOSE, ["down", "-v"], { cwd: project, env });
      await podman("network", "rm", "game-community-api_default");
    }
    if (parent) rmSync(parent, { recursive: true, force: true });
  }, 120_000);

  it("when its lines are run, then two replicas answer through nginx and the CLI line creates a user whose key works", async () => {
    const outputs: string[] = [];
    for (const line of lines) {
      if (line.includes("<key>")) break; // the last line needs a key: below
      const result = await shell(line);
      expect(result.code, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0);
      outputs.push(result.stdout);
      if (/\bup -d\b/.test(line)) {
        // Docker Compose would have waited for the health checks; podman-compose does not (above).
        for (const container of replicas) {
          await until(`${container} ready`, async () => (await inside(container, "http://127.0.0.1:3000/readyz"))?.status === 200, 240_000);
          expect((await podman("healthcheck", "run", container)).code).toBe(0);
        }
        await until("the load balancer", async () => (await fetch(`${LB}/readyz`).catch(() => undefined))?.status === 200);
        // Replicas that started before PostgreSQL was up were restarted by their restart policy, and for up to a
        // minute after `up` a new process in one may find its network in flux (seen here: connections to postgres
        // time out, then all is well): the CLI line waits, as it would after Docker Compose's health-gated start.
        for (const container of replicas) await until(`a new process in ${container} reaching postgres`, () => reaches(container, "postgres", 5432), 240_000);
      }
    }
    keyA = /First start: created the API user 'user-A'[\s\S]*?(gsk_[A-Za-z0-9_-]{43})/.exec(outputs.join("\n"))?.[1];
    expect(keyA, outputs.join("\n")).toBeDefined();
    const keyB = /^(gsk_[A-Za-z0-9_-]{43})$/m.exec(outputs.at(-1)!)?.[1];
    expect(keyB, outputs.at(-1)).toBeDefined();

    // The doc's last line, with each key: both answer through the load balancer.
    const curl = lines.find((l) => l.includes("<key>"))!;
    const route = "/api/player/get-all-players";
    const before = await Promise.all(replicas.map((c) => served(c, route)));
    for (let i = 0; i < 10; i++) {
      for (const key of [keyA!, keyB!]) {
        const result = await shell(curl.replace("<key>", key));
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toEqual([]);
      }
    }
    const after = await Promise.all(replicas.map((c) => served(c, route)));
    // nginx's round robin: each replica served some of the 20, and all 20 were served by them.
    expect(after[0]! - before[0]!).toBeGreaterThan(0);
    expect(after[1]! - before[1]!).toBeGreaterThan(0);
    expect(after[0]! - before[0]! + (after[1]! - before[1]!)).toBe(20);
  });

  it("when the replicas are restarted one at a time as OPERATIONS.md says, then reads through nginx never fail meanwhile", async () => {
    expect(keyA, "the first test's key").toBeDefined();
    expect(restartScript).toContain("docker restart");
    let running = true;
    // The engine's health-check scheduler, which podman runs from systemd timers these machines lack.
    const health = (async () => {
      while (running) {
        for (const container of replicas) await podman("healthcheck", "run", container);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    const reader = async () => {
      while (running) {
        const res = await fetch(`${LB}/api/player/get-all-players`, { headers: { "X-API-Key": keyA! }, signal: AbortSignal.timeout(60_000) }).catch(
          (e: unknown) => String((e as Error).cause ?? e),
        );
        if (typeof res === "string") count(`connection: ${res}`);
        else {
          count(String(res.status));
          await res.arrayBuffer();
          // A 503 or a 429 is retried after its Retry-After, as CALLING.md says: not a failure.
          if (res.status === 503 || res.status === 429) await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get("retry-after") ?? 1) * 1000));
        }
        // Two readers at 4 requests a second each stay under compose.yaml's RATE_LIMIT_PER_MINUTE (600) for the key.
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const readers = Promise.all([reader(), reader()]);
    const script = restartScript.replaceAll("docker compose", COMPOSE).replace(/\bdocker (ps|restart|inspect)\b/g, "podman --runtime runc $1");
    const result = await run("bash", ["-e", "-o", "pipefail", "-c", script], { cwd: project, env });
    running = false;
    await Promise.all([readers, health]);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const seen = Object.fromEntries(statuses);
    expect(
      Object.keys(seen).filter((s) => s !== "200" && s !== "503" && s !== "429"),
      JSON.stringify(seen),
    ).toEqual([]);
    expect(seen["200"]).toBeGreaterThan(10);
    // Both replicas were restarted, and serve again.
    for (const container of replicas) expect((await inside(container, "http://127.0.0.1:3000/readyz"))?.status).toBe(200);
  });
});
