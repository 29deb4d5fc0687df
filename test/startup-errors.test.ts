import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { DatabaseConnectError } from "../src/db/connect-errors.js";
import { PRISMA_MIGRATE_LOCK } from "../src/db/migrate.js";
import { startService } from "../src/service/server.js";
import { createServerDatabase, onPostgres, serverUrl } from "./helpers/database.js";
import { cliProcess, freePort, outputOf, spawnOwned } from "./helpers/process.js";

/**
 * What a newcomer sees when DATABASE_URL is not right yet: one line naming the
 * fix, no stack trace. A stand-in PostgreSQL server answers every login with
 * the error a real one sends (the machine's PostgreSQL trusts every password,
 * and the test must not depend on one being there). Then the other refused
 * starts: a port taken, invalid variables.
 */
const root = path.resolve(import.meta.dirname, "..");

/** A server speaking just enough of the PostgreSQL protocol to refuse each login with this SQLSTATE and message. */
async function refusingServer(sqlState: string, message: string): Promise<{ port: number; close(): void }> {
  const field = (type: string, value: string) => Buffer.concat([Buffer.from(type), Buffer.from(value), Buffer.from([0])]);
  const body = Buffer.concat([field("S", "FATAL"), field("V", "FATAL"), field("C", sqlState), field("M", message), Buffer.from([0])]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  const errorResponse = Buffer.concat([Buffer.from("E"), length, body]);
  const server = net.createServer((socket) => {
    socket.once("data", () => socket.end(errorResponse));
    socket.on("error", () => undefined);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startFailure(databaseUrl: string): Promise<Error> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "off", DB_CONNECT_TIMEOUT_MS: "5000" });
  const error = await startService(config, createLogger("silent")).then(
    (service) => service.stop().then(() => new Error("started")),
    (e: unknown) => e as Error,
  );
  return error;
}

function run(script: string, args: string[], databaseUrl: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawnOwned(process.execPath, ["--import", "tsx", path.join(root, script), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1", METRICS_PORT: "off" },
    stdio: "pipe",
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stderr })));
}

let missing: { port: number; close(): void };
beforeAll(async () => {
  missing = await refusingServer("3D000", 'database "community" does not exist');
});
afterAll(() => missing?.close());

describe("a start on a PostgreSQL database that is not there yet", () => {
  it("when the database does not exist, then the server and the CLI each print one line naming it and how to create it, no stack trace", async () => {
    const url = `postgresql://app:s3cret@127.0.0.1:${missing.port}/community`;
    const line =
      `The database "community" does not exist on the PostgreSQL server at 127.0.0.1:${missing.port} (DATABASE_URL): ` +
      `create it with \`createdb -h 127.0.0.1 -p ${missing.port} -U app community\` (or \`CREATE DATABASE "community";\` in psql).\n`;
    const [server, cli] = await Promise.all([run("src/main.ts", [], url), run("src/cli/main.ts", ["user", "list"], url)]);
    expect(server).toEqual({ code: 1, stderr: line });
    expect(cli).toEqual({ code: 1, stderr: line });
  }, 60_000);

  it.runIf(onPostgres)("when the database named on the real server does not exist, then the same line names it", async () => {
    const url = new URL(serverUrl!);
    url.pathname = "/no_such_database_26";
    const error = await startFailure(url.toString());
    expect(error).toBeInstanceOf(DatabaseConnectError);
    expect(error.message).toMatch(/^The database "no_such_database_26" does not exist on the PostgreSQL server at .*createdb .* no_such_database_26`/);
  });

  it("when the password is refused, then the message names the user and DATABASE_URL, never the password", async () => {
    const refusing = await refusingServer("28P01", 'password authentication failed for user "app"');
    try {
      const error = await startFailure(`postgresql://app:s3cret@127.0.0.1:${refusing.port}/community`);
      expect(error).toBeInstanceOf(DatabaseConnectError);
      expect(error.message).toBe(
        `The PostgreSQL server at 127.0.0.1:${refusing.port} refused the login of user app (password authentication failed for user "app"): ` +
          "check the user name and password in DATABASE_URL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE).",
      );
      expect(error.message).not.toContain("s3cret");
    } finally {
      refusing.close();
    }
  });

  it("when nothing listens at the host and port, then the message says it cannot reach the server there", async () => {
    const port = await closedPort();
    const error = await startFailure(`postgresql://app@127.0.0.1:${port}/community`);
    expect(error).toBeInstanceOf(DatabaseConnectError);
    expect(error.message).toBe(
      `Cannot reach the PostgreSQL server at 127.0.0.1:${port} (DATABASE_URL): connection refused. ` +
        "Is PostgreSQL running there, and are the host and port in DATABASE_URL right?",
    );
  });
});

/** src/main.ts with `env` over this process's, on 127.0.0.1: its exit code and stderr. */
function startMain(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnOwned(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", NODE_ENV: "production", ...env },
    stdio: "pipe",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("a first start on a port that is taken", () => {
  /**
   * On a fresh database (an empty DATA_DIR, or an empty PostgreSQL database): a start that cannot
   * listen fails before it writes anything, so no first user is created whose key nobody saw.
   */
  it.each(["PORT", "METRICS_PORT"])(
    "when %s is taken, then the start fails naming it, creates no user and prints no key",
    async (variable) => {
      const taken = net.createServer().listen(0, "127.0.0.1");
      await once(taken, "listening");
      const port = (taken.address() as AddressInfo).port;
      const dataDir = mkdtempSync(path.join(tmpdir(), "taken-port-"));
      const database = onPostgres ? await createServerDatabase() : undefined;
      try {
        const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, METRICS_PORT: "off", [variable]: String(port), DATABASE_URL: database?.url };
        if (!database) delete env.DATABASE_URL;
        const { code, stdout, stderr } = await startMain(env);
        expect(code).toBe(1);
        expect(stderr).toContain(`Cannot listen on 127.0.0.1:${port} (${variable}=${port}): the address is in use`);
        expect(stderr).not.toContain("    at ");
        expect(stdout).not.toContain("First start");
        expect(stdout + stderr).not.toMatch(/gsk_/);
        // Nothing written: the embedded database's folder is still empty, PostgreSQL's database has no table.
        if (database) expect(await tablesIn(database.url)).toEqual([]);
        else expect(readdirSync(dataDir)).toEqual([]);
      } finally {
        taken.close();
        rmSync(dataDir, { recursive: true, force: true });
        await database?.drop();
      }
    },
    60_000,
  );
});

async function tablesIn(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe("a bad configuration", () => {
  it("when variables are invalid, then the server refuses to start and names each of them", async () => {
    const { code, stderr } = await startMain({ PORT: "99999", DATABASE_URL: "mysql://nope", LOG_LEVEL: "loud" });
    expect(code).toBe(1);
    expect(stderr).toContain("Invalid configuration");
    expect(stderr).toContain("PORT: expected an integer between 0 and 65535");
    expect(stderr).toContain("DATABASE_URL: expected a postgres:// or postgresql:// URL");
    expect(stderr).toMatch(/LOG_LEVEL: /);
  });
});

describe("a data folder that cannot be used", () => {
  /** The embedded database's DATA_DIR, as the server and the CLI meet it: one line naming it and the fix, exit 1. */
  const both = async (dataDir: string, asUser?: string) => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: "", METRICS_PORT: "off" };
    const wrap = (script: string, args: string[] = []) => {
      const node = [process.execPath, "--import", "tsx", path.join(root, script), ...args];
      // As root (CI), the permission case runs as `nobody`: root may write anywhere.
      const [command, ...rest] = asUser ? ["setpriv", `--reuid=${asUser}`, "--regid=nogroup", "--clear-groups", ...node] : node;
      // tsx keeps its cache in the temporary folder, which `nobody` must be able to write.
      const tmp = asUser ? { TMPDIR: scratchFor(asUser) } : {};
      const child = spawnOwned(command!, rest, { cwd: root, env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env, ...tmp }, stdio: "pipe" });
      return outputOf(child);
    };
    return Promise.all([wrap("src/main.ts"), wrap("src/cli/main.ts", ["user", "list"])]);
  };

  const scratch: string[] = [];
  const scratchFor = (user: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), `scratch-${user}-`));
    chmodSync(dir, 0o1777);
    scratch.push(dir);
    return dir;
  };
  afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("when a file is in the way of DATA_DIR, then the server and the CLI print one line naming DATA_DIR, and exit 1", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "data-in-the-way-"));
    try {
      writeFileSync(path.join(dir, "file"), "");
      const dataDir = path.join(dir, "file", "data");
      for (const run of await both(dataDir)) {
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(
          `The data folder ${dataDir} (DATA_DIR) cannot be a folder: a file is in the way on its path. Move that file, or set DATA_DIR to a folder it may write, or DATABASE_URL to use a PostgreSQL server.\n`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("when DATA_DIR's parent may not be written by the process, then the same one line says permission denied and the uid", async () => {
    const root_ = process.getuid?.() === 0;
    const dir = mkdtempSync(path.join(tmpdir(), "data-denied-"));
    try {
      chmodSync(dir, 0o555);
      if (root_) chmodSync(dir, 0o755); // owned by root: nobody may not write it
      const dataDir = path.join(dir, "data");
      const runs = await both(dataDir, root_ ? "nobody" : undefined);
      for (const run of runs) {
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(
          /^The data folder .* \(DATA_DIR\) cannot be created or written by this process \(uid \d+\): permission denied\. Give it to this user \(chown\), or set DATA_DIR .*\n$/,
        );
      }
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      chmodSync(dir, 0o755);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.runIf(onPostgres)("DATABASE_DIRECT_URL naming another database than DATABASE_URL, on PostgreSQL", () => {
  /**
   * Issue 48: a restore drill run with DATABASE_URL=…/community_drill while .env still held production's
   * DATABASE_DIRECT_URL migrated production, then failed on the drill's empty database with a stack trace.
   */
  it("when the CLI or the server starts so, then it stops with one line naming both, and migrates neither database", async () => {
    const [drill, production] = [await createServerDatabase(), await createServerDatabase()];
    try {
      const env = { ...process.env, DATABASE_URL: drill.url, DATABASE_DIRECT_URL: production.url, METRICS_PORT: "off" };
      const names = [drill.url, production.url].map((u) => new URL(u).pathname.slice(1));
      const line = new RegExp(
        `^DATABASE_URL reaches the database "${names[0]}" and DATABASE_DIRECT_URL "${names[1]}": they must name the same database .*Nothing was written.*\n$`,
      );
      const cli = await cliProcess(["user", "list"], env);
      expect(cli.code).toBe(1);
      expect(cli.stderr).toMatch(line);
      const server = await startMain({ DATABASE_URL: drill.url, DATABASE_DIRECT_URL: production.url, METRICS_PORT: "off" });
      expect(server.code).toBe(1);
      expect(server.stderr).toMatch(line);
      expect(await tablesIn(drill.url)).toEqual([]);
      expect(await tablesIn(production.url)).toEqual([]);
    } finally {
      await drill.drop();
      await production.drop();
    }
  }, 60_000);
});

describe.runIf(onPostgres)("a request that reaches an instance still starting, on PostgreSQL", () => {
  /**
   * A second instance started while the first applies the migrations waits for it (the migration lock), with
   * its port already taken: a load balancer or a client that reaches it then is told to retry, and the
   * instance serves once the lock is released. Here the test holds the lock, as the first instance would.
   */
  it("when it waits for the migration lock, then every request is answered 503 STARTING with Retry-After, and it serves once the lock is free", async () => {
    const database = await createServerDatabase();
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    let service: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      await holder.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK})`);
      const port = await freePort();
      const config = loadConfig({ DATABASE_URL: database.url, PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: "off" });
      const starting = startService(config, createLogger("silent"));
      let ready = false;
      void starting.then(
        () => (ready = true),
        () => undefined,
      );
      const base = `http://127.0.0.1:${port}`;
      // The port is taken before the database is opened: poll until it accepts.
      let first: Response | undefined;
      while (!first) {
        first = await fetch(`${base}/readyz`).catch(() => undefined);
        if (!first) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const answers = [
        first,
        await fetch(`${base}/api/player/get-all-players`, { headers: { "X-API-Key": "gsk_whatever" } }),
        await fetch(`${base}/api/freebuild/update-world`, { method: "PATCH", headers: { "Content-Type": "application/json" }, body: '{"id":1}' }),
        await fetch(`${base}/livez`, { method: "HEAD" }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(res.headers.get("error-name")).toBe("STARTING");
        expect(res.headers.get("connection")).toBe("close");
        if (res.headers.get("content-length") !== "0" && res.body) {
          const text = await res.text();
          if (text)
            expect(JSON.parse(text)).toEqual({
              code: 503,
              message: "Not ready: this instance is starting (opening the database, applying migrations); retry in a moment",
            });
        }
      }
      expect(ready).toBe(false);
      await holder.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK})`);
      service = await starting;
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(200);
    } finally {
      await service?.stop();
      await holder.end();
      await database.drop();
    }
  });
});
