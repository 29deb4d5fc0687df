import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { citext } from "@electric-sql/pglite/contrib/citext";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.js";
import { acquireDataDirLock } from "./embedded-lock.js";

/**
 * A plain SQL connection beside Prisma, for what Prisma does not do:
 * multi-statement migration scripts under a session-level advisory lock.
 */
export interface SqlConnection {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  exec(script: string): Promise<void>;
  release(): Promise<void>;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface Database {
  readonly kind: "postgres" | "embedded";
  readonly prisma: PrismaClient;
  /** A connection of its own (PostgreSQL) or the single one (PGlite). */
  connect(): Promise<SqlConnection>;
  /**
   * LISTENs on a channel. `lost` is called once if the subscription dies (the
   * connection dropped): messages may have been missed since.
   */
  subscribe(channel: string, handlers: { message(payload: string): void; lost(error: Error): void }): Promise<Subscription>;
  close(): Promise<void>;
}

export type DatabaseOptions =
  | { kind: "postgres"; url: string; poolMax: number }
  | { kind: "embedded"; dataDir: string; command: string }
  | { kind: "memory" };

export function openDatabase(options: DatabaseOptions): Database {
  return options.kind === "postgres" ? openPostgres(options.url, options.poolMax) : openEmbedded(options);
}

function openPostgres(url: string, poolMax: number): Database {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolMax }) });
  return {
    kind: "postgres",
    prisma,
    async connect() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return {
        async query<T>(text: string, params?: unknown[]) {
          return (await client.query(text, params)).rows as T[];
        },
        async exec(script: string) {
          await client.query(script);
        },
        release: () => client.end(),
      };
    },
    async subscribe(channel, handlers) {
      const client = new pg.Client({ connectionString: url });
      let closing = false;
      let lost = false;
      const onLost = (error: Error) => {
        if (closing || lost) return;
        lost = true;
        handlers.lost(error);
      };
      client.on("error", onLost);
      client.on("end", () => onLost(new Error("LISTEN connection ended")));
      client.on("notification", (n) => {
        if (n.channel === channel) handlers.message(n.payload ?? "");
      });
      await client.connect();
      await client.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
      return {
        async close() {
          closing = true;
          await client.end().catch(() => undefined);
        },
      };
    },
    close: () => prisma.$disconnect(),
  };
}

function openEmbedded(options: { kind: "embedded"; dataDir: string; command: string } | { kind: "memory" }): Database {
  const release =
    options.kind === "embedded" ? acquireDataDirLock(options.dataDir, options.command) : () => undefined;
  let pglite: PGlite;
  try {
    pglite =
      options.kind === "embedded"
        ? new PGlite(path.join(options.dataDir, "pglite"), { extensions: { citext } })
        : new PGlite({ extensions: { citext } });
  } catch (error) {
    release();
    throw error;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    kind: "embedded",
    prisma,
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
}
