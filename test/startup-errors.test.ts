import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/core/config.js";
import { DatabaseConnectError } from "../src/db/connect-errors.js";
import { createLogger } from "../src/core/logger.js";
import { startService } from "../src/service/server.js";
import { createServerDatabase, onPostgres, serverUrl } from "./helpers/database.js";
import { spawnOwned } from "./helpers/process.js";

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
  it.each(["PORT", "METRICS_PORT"])("when %s is taken, then the start fails naming it, creates no user and prints no key", async (variable) => {
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
  }, 60_000);
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
