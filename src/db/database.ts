import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { citext } from "@electric-sql/pglite/contrib/citext";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.js";
import type { ReadClient } from "./client.js";
import { acquireDataDirLock } from "./embedded-lock.js";
import { pgListQueries, pgRawQueries } from "./pg-reader.js";
import { poolerWarnings, startupTimeoutClient } from "./pooler.js";
import { timedClient } from "./query-timeout.js";
import { ListenUnavailableError, postgresSessions, type SqlConnection, type SubscribeHandlers, type Subscription, sameDatabaseFirst } from "./sessions.js";
import { traced } from "./traced-adapter.js";

export type { SqlConnection, Subscription } from "./sessions.js";
export { ListenUnavailableError } from "./sessions.js";

export interface Database {
  readonly kind: "postgres" | "embedded";
  readonly prisma: PrismaClient;
  /**
   * For the read-only routes: a client on the read replica (DATABASE_READ_URL)
   * when one is configured, else the same client as `prisma`. Never for API
   * keys (a revocation must count at once) nor inside a write.
   */
  readonly reader: PrismaClient;
  /** The read routes' raw queries on the reader's connections: on PostgreSQL without Prisma's machinery, and with list snapshots (pg-reader.ts). */
  readonly readQueries: ReadClient;
  /** The same on the primary, for a write that is one statement outside any transaction (http/write.ts). */
  readonly writeQueries: Pick<PrismaClient, "$queryRaw">;
  /** A connection of its own (PostgreSQL, on DATABASE_DIRECT_URL when set) or the single one (PGlite). */
  connect(): Promise<SqlConnection>;
  /**
   * LISTENs on a channel. `lost` is called once if the subscription dies (the
   * connection dropped): messages may have been missed since. Throws
   * ListenUnavailableError once checkPooler found LISTEN not delivered.
   */
  subscribe(channel: string, handlers: SubscribeHandlers): Promise<Subscription>;
  /**
   * At start: what a transaction-mode pooler keeps from working, one warning each, and what the service does
   * differently behind one (named prepared statements off), one note each (pooler.ts); nothing on PGlite.
   */
  checkPooler(): Promise<{ warnings: string[]; notes: string[] }>;
  /** Answers when the database runs a trivial query within `timeoutMs`; throws otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** The connection pool right now (PostgreSQL only): for metrics. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface PoolStats {
  max: number;
  total: number;
  idle: number;
  /** Requests waiting for a free connection. */
  waiting: number;
}

/** Bounded waits for a PostgreSQL server; every wait for the database ends. */
export interface PostgresLimits {
  poolMax: number;
  /** Waiting for a connection (a new one, or a free one from the full pool). */
  connectTimeoutMs?: number;
  /** statement_timeout of every session. */
  statementTimeoutMs?: number;
  /** Told about errors of idle connections (the server restarted, a connection was killed). */
  onPoolError?: (error: Error) => void;
  /** A read replica for the read-only routes, with the same limits. */
  readUrl?: string;
  /**
   * Statements run more than once prepared on each connection. Unset: yes, unless checkPooler finds a
   * transaction-mode pooler on the URL; false for PgBouncer's transaction mode before 1.21, true to keep them behind one that has them.
   */
  preparedStatements?: boolean;
  /** Past the pooler, for the sessions of their own (migrations, LISTEN). */
  directUrl?: string;
}

export type DatabaseOptions =
  | ({ kind: "postgres"; url: string } & PostgresLimits)
  | { kind: "embedded"; dataDir: string; command: string; from?: Blob }
  /** Tests only: `from` a dumpDataDir() tarball instead of an empty database, in memory or in an empty data folder (test/helpers/pglite-template.ts). */
  | { kind: "memory"; from?: Blob };

export function openDatabase(options: DatabaseOptions): Database {
  return options.kind === "postgres" ? openPostgres(options.url, options) : openEmbedded(options);
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

function openPostgres(url: string, limits: PostgresLimits): Database {
  const connectionTimeoutMillis = limits.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const pool = boundedPool(url, limits, connectionTimeoutMillis);
  const prisma = new PrismaClient({ adapter: traced(new PrismaPg(pool, { disposeExternalPool: true })) });
  const replicaPool = limits.readUrl ? boundedPool(limits.readUrl, limits, connectionTimeoutMillis) : undefined;
  const reader = replicaPool ? new PrismaClient({ adapter: traced(new PrismaPg(replicaPool, { disposeExternalPool: true })) }) : prisma;
  // Connections of their own (migrations, LISTEN) wait no longer than the pool's.
  const sessions = postgresSessions({ connectionString: limits.directUrl ?? url, connectionTimeoutMillis });
  let listen = true;
  let prepared = limits.preparedStatements ?? true;
  return {
    kind: "postgres",
    prisma,
    reader,
    readQueries: pgListQueries(replicaPool ?? pool, () => prepared),
    writeQueries: pgRawQueries(pool, () => prepared),
    connect: limits.directUrl ? sameDatabaseFirst(sessions.connect, pool) : sessions.connect,
    async subscribe(channel, handlers) {
      if (!listen) throw new ListenUnavailableError();
      return sessions.subscribe(channel, handlers);
    },
    async checkPooler() {
      const found = await poolerWarnings({
        pool,
        statementTimeoutMs: limits.statementTimeoutMs,
        timeoutMs: connectionTimeoutMillis,
        sessionsVariable: limits.directUrl ? "DATABASE_DIRECT_URL" : "DATABASE_URL",
        subscribe: sessions.subscribe,
        // Whether DATABASE_URL itself is a transaction-mode pooler: the same probe, on it (asked apart only when the sessions go elsewhere).
        subscribeOnUrl: limits.directUrl ? postgresSessions({ connectionString: url, connectionTimeoutMillis }).subscribe : undefined,
        preparedStatements: limits.preparedStatements,
      });
      listen = found.listen;
      if (found.transactionPooler && limits.preparedStatements === undefined) prepared = false;
      return { warnings: found.warnings, notes: found.notes };
    },
    async ping(timeoutMs) {
      const pings = [pool, replicaPool].filter((p) => p !== undefined).map((p) => p.query("SELECT 1"));
      await withTimeout(Promise.all(pings), timeoutMs, "database did not answer");
    },
    poolStats: () => ({ max: limits.poolMax, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      for (const [client, p] of [[prisma, pool], ...(replicaPool ? [[reader, replicaPool] as const] : [])] as const) {
        await client.$disconnect();
        // Prisma ends the pool only if it ever connected.
        if (!p.ended) await p.end().catch(() => undefined);
      }
    },
  };
}

/**
 * Our own pool, so that its waits are bounded and its errors heard: an idle
 * connection killed by the server emits "error" on the pool, which would
 * crash the process if nobody listened.
 */
function boundedPool(url: string, limits: PostgresLimits, connectionTimeoutMillis: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: limits.poolMax,
    connectionTimeoutMillis,
    ...(limits.statementTimeoutMs
      ? {
          statement_timeout: limits.statementTimeoutMs,
          // The client's own backstop, for a server that never answers at all (a network partition):
          // a connection whose query timed out this way is discarded by the pool.
          // Sent as a startup parameter where the server (or a pooler in front) accepts it.
          Client: startupTimeoutClient(
            timedClient(limits.statementTimeoutMs + connectionTimeoutMillis),
            url,
            limits.statementTimeoutMs,
            connectionTimeoutMillis,
          ),
        }
      : {}),
    idleTimeoutMillis: 30_000,
  });
  pool.on("error", (error) => limits.onPoolError?.(error));
  return pool;
}

/** Rejects when `promise` has not settled within `ms` (the promise itself is left to finish). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: "ETIMEDOUT" })), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const memoryInstances = new WeakMap<Database, PGlite>();

/** Tests only: a memory database's data folder as a tarball, for others to start `from`. */
export function dumpMemoryDatabase(db: Database): Promise<Blob> {
  return memoryInstances.get(db)!.dumpDataDir("gzip");
}

function openEmbedded(options: { kind: "embedded"; dataDir: string; command: string; from?: Blob } | { kind: "memory"; from?: Blob }): Database {
  const release = options.kind === "embedded" ? acquireDataDirLock(options.dataDir, options.command) : () => undefined;
  let pglite: PGlite;
  try {
    pglite =
      options.kind === "embedded"
        ? new PGlite(path.join(options.dataDir, "pglite"), { extensions: { citext }, loadDataDir: options.from })
        : new PGlite({ extensions: { citext }, loadDataDir: options.from });
  } catch (error) {
    release();
    throw error;
  }
  const prisma = new PrismaClient({ adapter: traced(new PrismaPGlite(pglite)) });
  const db: Database = {
    kind: "embedded",
    prisma,
    reader: prisma,
    readQueries: prisma,
    writeQueries: prisma,
    async connect() {
      await pglite.waitReady;
      return {
        async query<T>(text: string, params?: unknown[]) {
          return (await pglite.query<T>(text, params)).rows;
        },
        async exec(script: string) {
          await pglite.exec(script);
        },
        release: () => Promise.resolve(),
      };
    },
    async ping(timeoutMs) {
      await withTimeout(pglite.query("SELECT 1"), timeoutMs, "database did not answer");
    },
    poolStats: () => undefined,
    checkPooler: () => Promise.resolve({ warnings: [], notes: [] }),
    async subscribe(channel, handlers) {
      const unsubscribe = await pglite.listen(channel, (payload) => handlers.message(payload));
      return { close: () => unsubscribe() };
    },
    async close() {
      try {
        await prisma.$disconnect();
        await pglite.close();
      } finally {
        release();
      }
    },
  };
  if (options.kind === "memory") memoryInstances.set(db, pglite);
  return db;
}
