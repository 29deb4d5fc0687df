import { Redis } from "ioredis";
import type { Logger } from "../core/logger.js";
import { throttledWarning } from "../core/throttled-warning.js";
import { inSpan, SpanKind, tracing } from "../core/tracing.js";

export type { Redis };

/**
 * The Redis client of the rate-limit counters, made to fail fast: while
 * Redis is unreachable a command is refused at once (no offline queue) or
 * within COMMAND_TIMEOUT_MS (a server that accepts but does not answer), so
 * the limiters count in memory instead of holding the request. The client
 * reconnects on its own, with backoff, and never crashes the process: its
 * errors are logged, at most one line per 30 s.
 */
export const COMMAND_TIMEOUT_MS = 500;

export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    // 250 ms, 500 ms, … up to 5 s between attempts, for as long as it takes.
    retryStrategy: (attempt) => Math.min(attempt * 250, 5_000),
  });
  const warn = throttledWarning(logger, "Redis unreachable: rate limits are counted in each instance's memory until it is back");
  let failing = false;
  redis.on("error", (err: unknown) => {
    failing = true;
    warn(err);
  });
  redis.on("ready", () => {
    if (failing) logger.info("Redis reachable again: rate limits are shared again");
    failing = false;
  });
  if (tracing.on) traceCommands(redis);
  return redis;
}

/**
 * Tracing on (core/tracing.ts): a span per command, in the context that sent it (a request's, when a rate
 * limit takes a lease), named by the command alone (`redis EVALSHA`): never its keys nor its arguments.
 */
function traceCommands(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Parameters<Redis["sendCommand"]>[0], stream?: Parameters<Redis["sendCommand"]>[1]) => {
    const attributes = { "db.system.name": "redis", "db.operation.name": command.name.toUpperCase() };
    // The span ends with the command's answer; its failure is the caller's to handle (recorded here too).
    void inSpan(`redis ${command.name.toUpperCase()}`, attributes, () => command.promise, { kind: SpanKind.CLIENT }).catch(() => undefined);
    return send(command, stream);
  };
}

/**
 * Resolves once the client is connected, or has failed once, or after
 * timeoutMs: whichever comes first. A server entry awaits it before
 * listening, so counting starts with the first request when Redis is up,
 * and a Redis that is down does not hold the start (each instance counts alone meanwhile).
 */
export function redisSettled(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      redis.off("error", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once("ready", done);
    redis.once("error", done);
  });
}

/** Closes the client: politely when connected, at once otherwise (QUIT cannot be sent to a server that is gone). */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === "ready") await redis.quit().catch(() => undefined);
  redis.disconnect();
}
