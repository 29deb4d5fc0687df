import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { makePlayer } from "./helpers/fixtures.js";
import { nginxAvailable, startNginx } from "./helpers/nginx.js";
import { openStream } from "./helpers/sse.js";

/**
 * HEAD /api/events behind the load balancer of compose.yaml (deploy/nginx.conf:
 * a pool of keep-alive connections to the instances, `keepalive 32`): the
 * connection that served a HEAD goes back to the pool and carries another
 * caller's next request, which must be answered (issue 37). nginx from
 * Debian's nginx-light; .ci/run installs it and sets REQUIRE_NGINX.
 */

let t: TestApp;
let proxy: ChildProcess | undefined;
let dir: string;
let proxyUrl: string;
let keyB: string;
let keyC: string;
let nick: string;

describe.skipIf(!nginxAvailable)("GET /api/events behind nginx (needs nginx)", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "events-proxy-"));
    t = await startTestApp({ env: { TRUST_PROXY: "1" } });
    keyB = await t.key("user-B");
    keyC = await t.key("user-C");
    nick = (await makePlayer(t.database.db.prisma)).pseudo;
    const nginx = await startNginx(dir, [Number(new URL(t.url).port)]);
    proxy = nginx.process;
    proxyUrl = nginx.url;
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
