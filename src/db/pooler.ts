import pg from "pg";
import { listenDelivers, type SubscribeHandlers, type Subscription } from "./sessions.js";

/** PgBouncer's answer to a startup parameter it does not know (statement_timeout among them). */
const REFUSED = /unsupported startup parameter/i;

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called on a client, with Reflect.apply
const pgConnect = pg.Client.prototype.connect as (...args: unknown[]) => unknown;

/**
 * `Base` sending statement_timeout as a startup parameter only where it is
 * accepted. A transaction-mode pooler (PgBouncer) refuses it and the
 * connection with it: the first connection finds out, with one connection of
 * its own, and from then on clients connect without it (poolerWarnings says
 * how to keep the timeout, once, at start).
 */
export function startupTimeoutClient(Base: typeof pg.Client, url: string, statementTimeoutMs: number, connectionTimeoutMillis: number): typeof pg.Client {
  let accepted: Promise<boolean> | undefined;
  const probe = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: url, statement_timeout: statementTimeoutMs, connectionTimeoutMillis });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.end().catch(() => undefined);
      return true;
    } catch (error) {
      if (REFUSED.test((error as Error).message)) return false;
      // Not an answer (the server is down): the next connection asks again, this one fails on its own.
      accepted = undefined;
      return true;
    }
  };
  return class StartupTimeoutClient extends Base {
    // pg's overloads (a callback or a promise) are kept as they came.
    override connect(callback?: unknown): never {
      accepted ??= probe();
      const connected = accepted.then((yes) => {
        if (!yes) (this as unknown as { connectionParameters: { statement_timeout?: number } }).connectionParameters.statement_timeout = undefined;
        return Reflect.apply(pgConnect, this, []) as Promise<void>;
      });
      if (!callback) return connected as never;
      const done = callback as ConnectCallback;
      connected.then(() => done(null, this), done);
      return undefined as never;
    }
  };
}

/** What poolerWarnings looks at. */
export interface PoolerCheck {
  pool: pg.Pool;
  statementTimeoutMs?: number;
  timeoutMs: number;
  /** Where the sessions of their own go: DATABASE_DIRECT_URL, or DATABASE_URL. */
  sessionsVariable: "DATABASE_DIRECT_URL" | "DATABASE_URL";
  subscribe: (channel: string, handlers: SubscribeHandlers) => Promise<Subscription>;
  /** LISTEN on DATABASE_URL itself, when the sessions go to DATABASE_DIRECT_URL: whether the pool's URL is a transaction-mode pooler. */
  subscribeOnUrl?: (channel: string, handlers: SubscribeHandlers) => Promise<Subscription>;
  /** DB_PREPARED_STATEMENTS as the operator set it; undefined when unset. */
  preparedStatements?: boolean;
}

/** Said at start when DATABASE_URL is a transaction-mode pooler and DB_PREPARED_STATEMENTS is unset (an info line). */
export const PREPARED_OFF_NOTE =
  "DATABASE_URL is a transaction-mode pooler (LISTEN through it is not delivered): statements are not prepared " +
  "(DB_PREPARED_STATEMENTS=true keeps them, for PgBouncer 1.21 and later with max_prepared_statements)";

/**
 * At start, what a transaction-mode pooler in front of PostgreSQL keeps from
 * working, each said once: statement_timeout not in effect on the pool's
 * connections (refused or dropped by the pooler), and LISTEN not delivered
 * (`listen` false: the callers poll instead).
 */
export async function poolerWarnings(check: PoolerCheck): Promise<{ warnings: string[]; notes: string[]; listen: boolean; transactionPooler: boolean }> {
  const warnings: string[] = [];
  const notes: string[] = [];
  if (check.statementTimeoutMs) {
    const [row] = (
      await check.pool.query<{ ms: number; role: string; database: string }>(
        "SELECT setting::int AS ms, quote_ident(current_user) AS role, quote_ident(current_database()) AS database FROM pg_settings WHERE name = 'statement_timeout'",
      )
    ).rows;
    const ms = row?.ms ?? 0;
    if (ms === 0 || ms > check.statementTimeoutMs) {
      warnings.push(
        `statement_timeout is ${ms === 0 ? "off" : `${ms} ms`} on DATABASE_URL's connections (a pooler refused or dropped it): ` +
          `a slow statement holds its connection until DB_STATEMENT_TIMEOUT_MS + DB_CONNECT_TIMEOUT_MS. ` +
          `Set it on the role: ALTER ROLE ${row?.role} IN DATABASE ${row?.database} SET statement_timeout = ${check.statementTimeoutMs}`,
      );
    }
  }
  const notify = (channel: string, payload: string) => check.pool.query("SELECT pg_notify($1, $2)", [channel, payload]);
  const listen = await listenDelivers(check.subscribe, notify, check.timeoutMs).catch(
    // Not an answer (the connection failed): the subscribers find out themselves, warn, and retry as ever.
    () => true,
  );
  // A transaction-mode pooler on DATABASE_URL hands each transaction to any server connection: a statement
  // prepared on one is unknown on the next, or already there under its name (PgBouncer before 1.21).
  const listenOnUrl = check.subscribeOnUrl ? await listenDelivers(check.subscribeOnUrl, notify, check.timeoutMs).catch(() => true) : listen;
  const transactionPooler = !listenOnUrl;
  if (transactionPooler && check.preparedStatements === undefined) notes.push(PREPARED_OFF_NOTE);
  if (transactionPooler && check.preparedStatements === true) {
    warnings.push(
      "DB_PREPARED_STATEMENTS=true, and DATABASE_URL is a transaction-mode pooler: right for PgBouncer 1.21 and later with " +
        "max_prepared_statements set; before that, requests fail (prepared statement already exists). Unset it to let the service decide",
    );
  }
  if (!listen) {
    warnings.push(
      `LISTEN is not delivered through ${check.sessionsVariable} (a transaction-mode pooler?): event streams and webhooks poll ` +
        "instead, and API keys are looked up on every request." +
        (check.sessionsVariable === "DATABASE_URL" ? " Set DATABASE_DIRECT_URL to a direct connection to PostgreSQL" : ""),
    );
  }
  return { warnings, notes, listen, transactionPooler };
}
