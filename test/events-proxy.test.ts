import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "./helpers/process.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { openStream } from "./helpers/sse.js";

/**
 * HEAD /api/events behind the load balancer of compose.yaml (deploy/nginx.conf:
 * a pool of keep-alive connections to the instances, `keepalive 32`): the
 * connection that served a HEAD goes back to the pool and carries another
 * caller's next request, which must be answered (issue 37). nginx from
 * Debian's nginx-light; .ci/run installs it and sets REQUIRE_NGINX.
 */
const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
const available = existsSync(NGINX);
if (!available && process.env.REQUIRE_NGINX) throw new Error(`No nginx at ${NGINX}, and REQUIRE_NGINX is set (as in CI)`);

let t: TestApp;
let proxy: ChildProcess | undefined;
let dir: string;
let proxyUrl: string;
let keyB: string;
let keyC: string;
let nick: string;


/** deploy/nginx.conf as it is, in front of the test app, on loopback ports, its files in `dir`. */
async function startProxy(appPort: number): Promise<void> {
  const port = await freePort();
  const site = readFileSync(path.join(import.meta.dirname, "../deploy/nginx.conf"), "utf8")
    .replace(/server api:3000([^;]*);/, `server 127.0.0.1:${appPort}$1;`)
    .replace("listen 80;", `listen 127.0.0.1:${port};`);
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, name)};`;
  writeFileSync(
    path.join(dir, "nginx.conf"),
    `daemon off; master_process off; pid ${path.join(dir, "nginx.pid")}; error_log ${path.join(dir, "error.log")};
     events {}
     http { access_log off; ${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp).join(" ")}
       ${site} }`,
  );
  proxy = spawn(NGINX, ["-p", dir, "-c", path.join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  proxyUrl = `http://127.0.0.1:${port}`;
  // Ready once it answers (the API's 401 to a request without a key).
  for (;;) {
    if (proxy.exitCode !== null) throw new Error(`nginx exited: ${readFileSync(path.join(dir, "error.log"), "utf8")}`);
    const answered = await fetch(`${proxyUrl}/api/cosmetic/get-cosmetic?id=1`).then((r) => r.status, () => 0);
    if (answered === 401) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!available)("GET /api/events behind nginx (needs nginx)", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "events-proxy-"));
    t = await startTestApp({ env: { TRUST_PROXY: "1" } });
    keyB = await t.key("user-B");
    keyC = await t.key("user-C");
    nick = (await makePlayer(t.database.db.prisma)).pseudo;
    await startProxy(Number(new URL(t.url).port));
  }, 30_000);
  afterAll(async () => {
    proxy?.kill("SIGKILL");
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("when a caller sends HEAD /api/events and events come, then other callers' requests through the proxy's pool are all answered", async () => {
    const head = await fetch(`${proxyUrl}/api/events?types=reward_log.created`, { method: "HEAD", headers: { "X-API-Key": keyB } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    // An event, seen on a stream of its own: by then the instance has handed it to every stream it has.
    const watcher = await openStream(t.url, keyB, "types=reward_log.created");
    try {
      await watcher.waitFor("the position", () => watcher.lastId !== "");
      const playerId = (await t.database.db.prisma.player.findFirstOrThrow({ where: { pseudo: nick } })).id;
      const write = await fetch(`${proxyUrl}/api/website/create-reward-log`, {
        method: "POST",
        headers: { "X-API-Key": keyB, "Content-Type": "application/json" },
        body: JSON.stringify({ playerId, rewardId: 1 }),
      });
      expect(write.status).toBe(201);
      await watcher.waitFor("the event", () => watcher.events.length === 1);
    } finally {
      await watcher.close();
    }
    // One after the other: each may take the pooled connection that served the HEAD.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${proxyUrl}/api/player/get-player-by-nick?nick=${encodeURIComponent(nick)}`, { headers: { "X-API-Key": keyC } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ pseudo: nick });
    }
  });
});
