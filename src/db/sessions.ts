import { randomUUID } from "node:crypto";
import pg from "pg";
import { DatabaseMismatchError } from "./connect-errors.js";

/**
 * A plain SQL connection beside Prisma, for what Prisma does not do:
 * multi-statement migration scripts, each in a transaction of its own.
 */
export interface SqlConnection {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  exec(script: string): Promise<void>;
  release(): Promise<void>;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface SubscribeHandlers {
  message(payload: string): void;
  lost(error: Error): void;
}

/**
 * subscribe() where the start found that LISTEN is not delivered (a
 * transaction-mode pooler, and no DATABASE_DIRECT_URL): the caller polls for
 * good, and does not retry. The start has said so once.
 */
export class ListenUnavailableError extends Error {
  constructor() {
    super("LISTEN is not delivered through this connection (a transaction-mode pooler?)");
    this.name = "ListenUnavailableError";
  }
}

/**
 * Sessions of their own on PostgreSQL (migrations, LISTEN): on
 * DATABASE_DIRECT_URL when set, since a transaction-mode pooler hands each
 * transaction to whichever server connection is free, and a session's LISTEN
 * stays behind on one of them.
 */
export function postgresSessions(config: pg.ClientConfig) {
  return {
    connect: async (): Promise<SqlConnection> => {
      const client = new pg.Client(config);
      client.on("error", () => undefined);
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
    subscribe: async (channel: string, handlers: SubscribeHandlers): Promise<Subscription> => {
      const client = new pg.Client(config);
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
  };
}

/**
 * Whether a NOTIFY sent through `notify` (the pool: another connection)
 * reaches a LISTEN made with `subscribe`, within `timeoutMs`. Through a
 * transaction-mode pooler it never does: the LISTEN stayed on a server
 * connection the pooler has since handed to someone else, or to no one.
 */
export async function listenDelivers(
  subscribe: (channel: string, handlers: SubscribeHandlers) => Promise<Subscription>,
  notify: (channel: string, payload: string) => Promise<unknown>,
  timeoutMs: number,
): Promise<boolean> {
  const channel = "listen_probe";
  const token = randomUUID();
  let heard: () => void = () => undefined;
  const arrived = new Promise<boolean>((resolve) => (heard = () => resolve(true)));
  const subscription = await subscribe(channel, { message: (payload) => payload === token && heard(), lost: () => undefined });
  let timer: NodeJS.Timeout | undefined;
  try {
    await notify(channel, token);
    return await Promise.race([arrived, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
  } finally {
    clearTimeout(timer);
    await subscription.close();
  }
}

/**
 * DATABASE_DIRECT_URL only bypasses the pooler: it must reach the database DATABASE_URL reaches. The first
 * session (the migrations come first, in the server and in every CLI command) checks it, before anything is
 * written through it: a drill's DATABASE_URL with production's DATABASE_DIRECT_URL left in .env would
 * otherwise migrate production and then fail on the drill's empty database.
 */
export function sameDatabaseFirst(connect: () => Promise<SqlConnection>, pool: pg.Pool): () => Promise<SqlConnection> {
  let checked = false;
  return async () => {
    const session = await connect();
    if (checked) return session;
    try {
      const [direct] = await session.query<{ name: string }>("SELECT current_database() AS name");
      const pooled = (await pool.query<{ name: string }>("SELECT current_database() AS name")).rows[0];
      if (direct?.name !== pooled?.name) {
        throw new DatabaseMismatchError(
          `DATABASE_URL reaches the database "${pooled?.name}" and DATABASE_DIRECT_URL "${direct?.name}": they must name the same ` +
            "database (the direct URL only goes past the pooler). Nothing was written; set both to the one you mean, or unset DATABASE_DIRECT_URL.",
        );
      }
      checked = true;
      return session;
    } catch (error) {
      await session.release().catch(() => undefined);
      throw error;
    }
  };
}
