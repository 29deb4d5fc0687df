import { once } from "node:events";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { DatabaseConnectError } from "../src/db/connect-errors.js";
import { createLogger } from "../src/logger.js";
import { startService } from "../src/server.js";
import { onPostgres, serverUrl } from "./helpers/database.js";
import { spawnOwned } from "./helpers/process.js";

/**
 * What a newcomer sees when DATABASE_URL is not right yet: one line naming the
 * fix, no stack trace. A stand-in PostgreSQL server answers every login with
 * the error a real one sends (the machine's PostgreSQL trusts every password,
 * and the test must not depend on one being there).
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
