import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/database.js";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { makePlayer } from "./helpers/fixtures.js";
import { nginxAvailable, startNginx } from "./helpers/nginx.js";
import { cliProcess, freePort, type ServiceProcess, spawnService } from "./helpers/process.js";

/**
 * A rolling restart as OPERATIONS.md ("Restarts and upgrades") gives it: two instances on one PostgreSQL
 * behind Debian's nginx with deploy/nginx.conf as shipped (its upstream's `server` line given once per
 * instance, with its parameters), each stopped (SIGTERM), started again and waited for in turn, while four
 * clients read and write as CALLING.md says to (a 503 retried after its Retry-After, every POST with an
 * Idempotency-Key, resent with the same key). No answer is a 502 or a 504, no connection is refused, and
 * every write acknowledged is stored, once.
 */
describe.runIf(nginxAvailable && onPostgres)("a rolling restart of two instances behind nginx, on PostgreSQL (needs nginx)", () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let nginx: ChildProcess | undefined;
  let lb: string;
  const ports: number[] = [];
  const instances: ServiceProcess[] = [];
  let key: string;
  let playerId: number;
  let nick: string;

  const env = (port: number) => ({
    DATABASE_URL: database.url,
    PORT: String(port),
    TRUST_PROXY: "1",
    // The service's own default, which deploy/nginx.conf's keepalive_timeout stays under.
    KEEP_ALIVE_TIMEOUT_MS: "5000",
    SHUTDOWN_TIMEOUT_MS: "10000",
    LOG_LEVEL: "info",
  });
  const start = async (i: number) => {
    const instance = spawnService(env(ports[i]!));
    instances[i] = instance;
    await instance.waitFor("listening line", () => /listening on/.test(instance.output()), 120_000);
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "rolling-"));
    database = await createServerDatabase();
    // Migrated and its first user made once, as the first start of a deployment does.
    const created = await cliProcess(["user", "create", "user-A"], { ...process.env, DATABASE_URL: database.url });
    expect(created.code, created.stderr).toBe(0);
    key = /^(gsk_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)![1]!;
    const db = openDatabase({ kind: "postgres", url: database.url, poolMax: 1 });
    const player = await makePlayer(db.prisma);
    await db.close();
    playerId = player.id;
    nick = player.pseudo;
    ports.push(await freePort(), await freePort());
    await Promise.all([start(0), start(1)]);

    ({ process: nginx, url: lb } = await startNginx(dir, ports));
    expect((await fetch(`${lb}/readyz`)).status).toBe(200);
  }, 240_000);

  afterAll(async () => {
    nginx?.kill("SIGKILL");
    await Promise.all(instances.map((i) => i?.stop()));
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("when each instance is restarted in turn under load, then no request fails and every acknowledged write is stored once", async () => {
    const firstAnswers = new Map<number | string, number>();
    const note = (what: number | string) => firstAnswers.set(what, (firstAnswers.get(what) ?? 0) + 1);
    const acknowledged: number[] = [];
    const headers = { "X-API-Key": key, "Content-Type": "application/json" };
    let running = true;

    /** One request as CALLING.md has a client send it: a 503 waits its Retry-After and goes again, a POST keeps its key. */
    const send = async (request: () => Promise<Response>): Promise<Response> => {
      for (let attempt = 0; ; attempt++) {
        const res = await request().catch((error: unknown) => String((error as Error).cause ?? error));
        if (typeof res === "string") {
          note(`connection: ${res}`);
          throw new Error(res);
        }
        if (attempt === 0 || res.status !== 503) note(res.status);
        if (res.status !== 503 || attempt > 20) return res;
        await res.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get("retry-after") ?? 1) * 1000));
      }
    };
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        if (i % 2 === 0) {
          const res = await send(() => fetch(`${lb}/api/player/get-player-by-nick?nick=${encodeURIComponent(nick)}`, { headers }));
          await res.arrayBuffer();
        } else {
          const rewardId = n * 1_000_000 + i;
          const idempotencyKey = randomUUID();
          const res = await send(() =>
            fetch(`${lb}/api/website/create-reward-log`, {
              method: "POST",
              headers: { ...headers, "Idempotency-Key": idempotencyKey },
              body: JSON.stringify({ playerId, rewardId }),
            }),
          );
          if (res.status === 201) acknowledged.push(rewardId);
          await res.arrayBuffer();
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));

    // OPERATIONS.md's procedure, one instance after the other.
    for (const i of [0, 1]) {
      expect(await instances[i]!.stop()).toBe(0);
      await start(i);
    }
    running = false;
    await load;

    const statuses = Object.fromEntries(firstAnswers);
    expect(
      Object.keys(statuses).filter((s) => !["200", "201", "503"].includes(s)),
      JSON.stringify(statuses),
    ).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(10);
    const client2 = new pg.Client({ connectionString: database.url });
    await client2.connect();
    const { rows } = await client2.query<{ reward_id: number; n: number }>(
      'SELECT "rewardId" AS reward_id, count(*)::int AS n FROM reward_logs WHERE "playerId" = $1 GROUP BY "rewardId"',
      [playerId],
    );
    await client2.end();
    const stored = new Map(rows.map((r) => [Number(r.reward_id), r.n]));
    for (const rewardId of acknowledged) expect(stored.get(rewardId), `reward ${rewardId}`).toBe(1);
  }, 240_000);

  it("when no instance is up, then nginx answers 503 saying to retry, with Retry-After, to a read and to a write: nothing was sent", async () => {
    await Promise.all(instances.map((i) => i.stop()));
    const headers = { "X-API-Key": key, "Content-Type": "application/json" };
    const answers = [
      await fetch(`${lb}/api/player/get-player-by-nick?nick=${encodeURIComponent(nick)}`, { headers }),
      await fetch(`${lb}/api/website/create-reward-log`, { method: "POST", headers, body: JSON.stringify({ playerId, rewardId: 7 }) }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({ code: 503, message: "Service unavailable, retry later" });
    }
  });
});
