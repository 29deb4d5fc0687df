import http from "node:http";
import { describe, expect, it } from "vitest";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { spawnService } from "./helpers/process.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** GET on a new connection each time, so that node:cluster hands each to a worker in turn. */
const get = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
      .on("error", reject);
  });

describe.skipIf(!onPostgres)("WEB_CONCURRENCY (PostgreSQL)", () => {
  it("when set to 2, then two workers share the port, the primary adds up their metrics, replaces a dead one, and SIGTERM stops them all cleanly", async () => {
    const database = await createServerDatabase();
    const service = spawnService({ DATABASE_URL: database.url, WEB_CONCURRENCY: "2", METRICS_PORT: "0" });
    const { child, exited, lines, waitFor } = service;
    const output = () => service.output();
    try {
      const listening = () => lines().filter((l) => typeof l.msg === "string" && l.msg.startsWith("listening on"));
      await waitFor("two workers listening", () => listening().length === 2);
      const port = listening()[0]!.port as number;
      expect(listening()[1]!.port).toBe(port);
      const metricsPort = Number(/"metrics":"127\.0\.0\.1:(\d+)"/.exec(output())![1]);
      // Migrations were applied once, by the primary.
      expect(lines().filter((l) => l.msg === "migration applied" && l.worker === undefined).length).toBeGreaterThan(0);
      expect(lines().filter((l) => l.msg === "migration applied" && l.worker !== undefined)).toEqual([]);
      // The first user was created once, by the primary: one key printed, though two workers started.
      expect(output().match(/gsk_[A-Za-z0-9_-]{43}/g), output()).toHaveLength(1);

      for (let i = 0; i < 20; i++) expect(await get(port, "/livez")).toBe(200);
      // Request lines reach stdout in blocks (every 250 ms at the latest): each worker's may come a little after its answers.
      const served = () =>
        new Set(
          lines()
            .filter((l) => l.msg === "request")
            .map((l) => l.worker),
        );
      await waitFor("request lines from both workers", () => served().size === 2);
      expect(served()).toEqual(new Set([1, 2]));
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('http_request_duration_seconds_count{method="GET",route="/livez",status="200"} 20');

      // A worker that dies is replaced.
      const [first] = listening();
      process.kill(first!.pid as number, "SIGKILL");
      await waitFor("a replacement worker", () => listening().length === 3);
      expect(lines().some((l) => l.msg === "worker died")).toBe(true);
      expect(await get(port, "/livez")).toBe(200);

      child.kill("SIGTERM");
      expect(await exited, output()).toBe(0);
      const stopped = lines().filter((l) => l.msg === "stopped");
      expect(stopped.filter((l) => l.worker !== undefined && l.graceful === true).length).toBe(2);
      expect(stopped.some((l) => l.worker === undefined && l.graceful === true)).toBe(true);
      for (const l of listening()) expect(alive(l.pid as number)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await database.drop();
    }
  }, 120_000);
});
