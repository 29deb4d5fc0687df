import { type ChildProcess, type ChildProcessWithoutNullStreams, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { outputOf, spawnOwned } from "./helpers/process.js";

/**
 * The real entry points as an operator runs them, `npm start` and `npm run
 * cli`: the build of src/ in dist/, made first when src/ changed since (as
 * those scripts do): start, first key, shutdown. Not through tsx, which costs
 * each of these processes about a second of CPU more to load. The starts that
 * are refused (a port taken, a bad variable): startup-errors.test.ts.
 */
const root = path.resolve(import.meta.dirname, "..");
let dir: string;
let env: NodeJS.ProcessEnv;
let dropServerDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const build = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: root, encoding: "utf8" });
  expect(build.status, build.stderr).toBe(0);
  dir = mkdtempSync(path.join(tmpdir(), "first-start-"));
  env = { ...process.env, DATA_DIR: dir, PORT: "0", METRICS_PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", NODE_ENV: "production" };
  delete env.DATABASE_URL;
  if (onPostgres) {
    const server = await createServerDatabase();
    env.DATABASE_URL = server.url;
    dropServerDatabase = () => server.drop();
  }
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropServerDatabase?.();
});

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** `node dist/<script>`, as `npm start` (dist/main.js) and `npm run cli` (dist/cli/main.js) run it. */
function run(script: string, args: string[] = []): ChildProcessWithoutNullStreams {
  return spawnOwned(process.execPath, [path.join(root, "dist", script), ...args], { cwd: root, env, stdio: "pipe" });
}

async function startServer(): Promise<Started> {
  const child = run("main.js");
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    // A bound for a hang, with what it wrote: a first start on a loaded machine has taken over a minute.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 150_000);
    child.stdout.on("data", () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  return { child, url, output: () => output };
}

async function stop(child: ChildProcess): Promise<string> {
  const exited = new Promise<string>((resolve) => child.on("exit", (code, signal) => resolve(`code ${code}, signal ${signal}`)));
  child.kill("SIGTERM");
  return exited;
}

const runCli = (args: string[]) => outputOf(run("cli/main.js", args));

describe.runIf(!onPostgres)("first start on the embedded database", () => {
  it("when started on an empty data folder, then it prints a group-A key once, serves with it, and stops cleanly", async () => {
    const first = await startServer();
    try {
      const key = /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(first.output())?.[1];
      expect(key, first.output()).toBeDefined();
      expect(first.output()).toContain("created the API user 'user-A' (group A)");
      const ok = await request(first.url).get("/api/player/get-all-players").set("X-API-Key", key!);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual([]);
      const unknown = await request(first.url)
        .get("/api/player/get-all-players")
        .set("X-API-Key", "gsk_" + "0".repeat(43));
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual({ code: 401, message: "API key missing or invalid: send a valid key in the X-API-Key header" });

      // The server holds the embedded database: it runs the command for the CLI (cli-beside-server.test.ts).
      const beside = await runCli(["user", "list"]);
      expect(beside.code, beside.stderr).toBe(0);
      expect(beside.stdout).toMatch(/user-A\s+USER\s+A\s+active/);

      // the key appears in the banner only, not in any log line
      const logLines = first
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"));
      expect(logLines.some((l) => l.includes(key!))).toBe(false);
    } finally {
      expect(await stop(first.child)).toBe("code 0, signal null");
    }

    const second = await startServer();
    try {
      expect(second.output()).not.toContain("gsk_");
    } finally {
      expect(await stop(second.child), second.output()).toBe("code 0, signal null");
    }

    const list = await runCli(["user", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/user-A\s+USER\s+A\s+active/);
  }, 300_000);
});

describe.runIf(onPostgres)("first start on a PostgreSQL server", () => {
  it("when two instances start at once on an empty database, then exactly one creates user-A and prints its key, which works on both", async () => {
    const [a, b] = await Promise.all([startServer(), startServer()]);
    try {
      const outputs = [a.output(), b.output()];
      const keys = outputs.map((o) => /\b(gsk_[A-Za-z0-9_-]{43})\b/.exec(o)?.[1]).filter((k): k is string => k !== undefined);
      expect(keys, outputs.join("\n----\n")).toHaveLength(1);
      expect(outputs.filter((o) => o.includes("created the API user 'user-A' (group A)"))).toHaveLength(1);
      for (const server of [a, b]) {
        const res = await request(server.url).get("/api/player/get-all-players").set("X-API-Key", keys[0]!);
        expect(res.status).toBe(200);
      }
    } finally {
      expect(await stop(a.child)).toBe("code 0, signal null");
      expect(await stop(b.child)).toBe("code 0, signal null");
    }

    const again = await startServer();
    try {
      expect(again.output()).not.toContain("gsk_");
    } finally {
      expect(await stop(again.child)).toBe("code 0, signal null");
    }
    const list = await runCli(["user", "list"]);
    expect(list.stdout.match(/^user-A\s/gm)).toHaveLength(1);
  }, 300_000);
});
