import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import { type Config, loadConfig } from "../../src/core/config.js";
import { createLogger } from "../../src/core/logger.js";
import { closeRedis, createRedis, redisSettled } from "../../src/limits/redis.js";
import { apiRoutes } from "../../src/resources/index.js";
import { type AppOptions, createApp } from "../../src/service/app.js";
import { createHttpServer } from "../../src/service/http-server.js";
import { EventHub } from "../../src/stream/hub.js";
import { ApiUsers } from "../../src/users/users.js";
import { contractChecker, type SeenResponse } from "./contract.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { TEST_SERVER_ENV } from "./server-env.js";

/** Collects every log line the app writes, parsed, for assertions. */
export class LogCapture extends Writable {
  readonly raw: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.raw.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  }
  get lines(): Record<string, unknown>[] {
    return this.raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface TestApp {
  /** http://127.0.0.1:<port> — pass to supertest's request(). */
  url: string;
  /** The listening server (to watch its connections). */
  server: Server;
  config: Config;
  database: TestDatabase;
  users: ApiUsers;
  logs: LogCapture;
  /** Every response sent so far (with its JSON body, if any). */
  seen: SeenResponse[];
  /** The event streams of this app (GET /api/events). */
  events: EventHub;
  /** Registers an API user and returns its key. */
  key(username: string, role?: string): Promise<string>;
  close(): Promise<void>;
}

/** What createApp takes, but the configuration (from `env`), the database (a new one unless given) and the Redis of REDIS_URL. */
export type TestAppOptions = Omit<AppOptions, "config" | "db" | "logger" | "redis"> & {
  env?: Record<string, string>;
  database?: TestDatabase;
};

/** The real app on a real database, listening on 127.0.0.1 on a free port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { env, database: given, ...appOptions } = options;
  const config = loadConfig({ NODE_ENV: "test", ...TEST_SERVER_ENV, ...env });
  const logs = new LogCapture();
  const logger = createLogger("debug", logs);
  const database = given ?? (await createTestDatabase());
  const redis = config.redisUrl ? createRedis(config.redisUrl, logger) : undefined;
  if (redis) await redisSettled(redis, 2_000);
  const events = appOptions.events ?? new EventHub(database.db, config, logger);
  const api = createApp({ ...appOptions, config, db: database.db, logger, redis, events });
  // Every response is kept, and checked against the OpenAPI document when the app closes.
  const seen: SeenResponse[] = [];
  const app = express();
  app.disable("x-powered-by");
  app.use((req, res, next) => {
    let body: unknown;
    const json = res.json.bind(res);
    res.json = (value: unknown) => {
      body = value;
      return json(value);
    };
    // Bodies serialised by PostgreSQL are sent as text.
    const send = res.send.bind(res);
    res.send = (value: unknown) => {
      if (body === undefined && typeof value === "string" && /json/.test(String(res.getHeader("content-type")))) {
        body = JSON.parse(value);
      }
      return send(value);
    };
    // Answers written without res.send: the JSON text handed to res.end (core/send.ts), or the
    // chunks of a streamed list (lists/list.ts) handed to res.write, then res.end.
    const asText = (chunk: unknown) => (typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : undefined);
    let streamed: string[] | undefined;
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const text = asText(args[0]);
      if (text !== undefined) (streamed ??= []).push(text);
      return write(...args);
    }) as typeof res.write;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      const text = asText(args[0]);
      const whole = streamed ? streamed.join("") + (text ?? "") : text;
      if (body === undefined && whole && req.method !== "HEAD" && /json/.test(String(res.getHeader("content-type")))) {
        body = JSON.parse(whole);
      }
      return end(...args);
    }) as typeof res.end;
    res.on("finish", () => {
      seen.push({
        method: req.method,
        path: req.originalUrl.split("?")[0]!,
        status: res.statusCode,
        headers: { ...res.getHeaders() },
        body: body === undefined ? undefined : (JSON.parse(JSON.stringify(body)) as unknown),
      });
    });
    next();
  });
  app.use(api);
  // The server the service runs, with its timeouts and its answers to broken HTTP.
  const server: Server = createHttpServer(app, config, logger).listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const users = new ApiUsers(database.db.prisma);
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    config,
    database,
    users,
    logs,
    key: async (username, role) => (await users.create(username, role)).apiKey,
    seen,
    events,
    async close() {
      await events.close();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
      if (redis) await closeRedis(redis);
      if (!given) await database.drop();
      const check = contractChecker(options.routes ?? apiRoutes);
      const problems = seen.map(check).filter((p): p is string => p !== undefined);
      if (problems.length > 0) {
        throw new Error(`${problems.length} response(s) do not match the OpenAPI document:\n${problems.slice(0, 20).join("\n")}`);
      }
    },
  };
}
