import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerDatabase, onPostgres } from "./helpers/database.js";
import { spawnOwned } from "./helpers/process.js";

/**
 * The real entry points as an operator runs them (through tsx instead of the
 * compiled dist/, which is the same code): start, first key, shutdown.
 */
const root = path.resolve(import.meta.dirname, "..");
let dir: string;
let env: NodeJS.ProcessEnv;
let dropServerDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
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

function run(script: string, args: string[] = []): ChildProcess {
  return spawnOwned(process.execPath, ["--import", "tsx", path.join(root, script), ...args], { cwd: root, env, stdio: "pipe" });
}

async function startServer(): Promise<Started> {
  const child = run("src/main.ts");
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 45_000);
    child.stdout!.on("data", () => {
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

async function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = run("src/cli/main.ts", args);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stdout, stderr };
}

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
      const unknown = await request(first.url).get("/api/player/get-all-players").set("X-API-Key", "gsk_" + "0".repeat(43));
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual({ code: 401, message: "API key missing or invalid: send a valid key in the X-API-Key header" });

      // The server holds the embedded database: it runs the command for the CLI (cli-beside-server.test.ts).
      const beside = await runCli(["user", "list"]);
      expect(beside.code, beside.stderr).toBe(0);
      expect(beside.stdout).toMatch(/user-A\s+USER\s+A\s+active/);

      // the key appears in the banner only, not in any log line
      const logLines = first.output().split("\n").filter((l) => l.startsWith("{"));
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
  }, 90_000);
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
  }, 120_000);
});

describe("a second instance on one host", () => {
  it("when the metrics port is taken, then the start fails with a message naming METRICS_PORT and its value", async () => {
    const taken = net.createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    const port = (taken.address() as AddressInfo).port;
    const ownDir = mkdtempSync(path.join(tmpdir(), "second-instance-"));
    try {
      const child = spawnOwned(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
        cwd: root,
        env: { ...env, DATA_DIR: ownDir, METRICS_PORT: String(port) },
        stdio: "pipe",
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).toBe(1);
      expect(stderr).toContain(`Cannot listen on 127.0.0.1:${port} (METRICS_PORT=${port}): the address is in use`);
      expect(stderr).not.toContain("    at ");
    } finally {
      taken.close();
      rmSync(ownDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("a bad configuration", () => {
  it("when variables are invalid, then the server refuses to start and names each of them", async () => {
    const child = spawnOwned(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
      cwd: root,
      env: { ...env, PORT: "99999", DATABASE_URL: "mysql://nope", LOG_LEVEL: "loud" },
      stdio: "pipe",
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("Invalid configuration");
    expect(stderr).toContain("PORT: expected an integer between 0 and 65535");
    expect(stderr).toContain("DATABASE_URL: expected a postgres:// or postgresql:// URL");
    expect(stderr).toMatch(/LOG_LEVEL: /);
  });
});
