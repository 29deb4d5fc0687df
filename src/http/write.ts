import type { Request, Response } from "express";
import { type AuditedUpdateEntry, type AuditSource, auditedWrite, recordAudit } from "../audit/audit.js";
import type { Config } from "../core/config.js";
import { ERROR_NAME_HEADER } from "../core/errors.js";
import { sendJsonText } from "../core/send.js";
import type { DbClient } from "../db/client.js";
import type { RowUpdate } from "../db/sql.js";
import { advanceIdSequence, generatedKeyCollision, largestId } from "../entities/constraints.js";
import type { Prisma } from "../generated/prisma/client.js";
import type { AppDeps } from "./deps.js";
import { type Answer, claimKey, fingerprint, idempotencyKey, REPLAYED_HEADER, runOnce, type Written } from "./idempotency.js";
import { type RouteSpec, type TransactionContext, Versioned } from "./route.js";

/**
 * How a write runs: the handler's statements, its audit entry and, for a POST
 * sent with an Idempotency-Key, the stored answer, all in one transaction — a
 * write is never stored half-way, and its audit entry exists exactly when it
 * does. A route declared `oneStatement` (its write and audit entry are one
 * SQL statement, ctx.auditedWrite) needs no transaction without a key.
 */
export async function runWrite(
  route: RouteSpec,
  req: Request,
  res: Response,
  deps: AppDeps,
  invoke: (ctx: TransactionContext) => Promise<unknown>,
): Promise<void> {
  const caller = req.caller!;
  const key = route.method === "POST" ? idempotencyKey(req) : undefined;
  const source: AuditSource = {
    actor: caller.username,
    requestId: deps.requestContext.getStore()?.requestId ?? null,
    clientAddress: req.ip ?? null,
  };
  const success = route.successStatus ?? 200;
  // `statements`: where the audited statement runs; outside a transaction, on node-postgres directly (db/pg-reader.ts).
  const run = async (client: DbClient, statements: Pick<DbClient, "$queryRaw"> = client): Promise<Written> => {
    const result = await invoke({
      caller,
      callers: deps.callers,
      db: client,
      now: deps.now,
      source,
      users: deps.users,
      webhooks: deps.config,
      // A drill's erasures stay in its copy: production's ledger would re-apply them to production's restores.
      erasureLedger: deps.config.drillMode ? undefined : deps.config.erasureLedger,
      audit: (entry) => recordAudit(client, { ...source, ...entry }),
      auditedWrite: <T>(write: Prisma.Sql | RowUpdate, entry: AuditedUpdateEntry & { changes?: Prisma.Sql }) =>
        auditedWrite<T>(statements, write, entry, source),
    });
    return result instanceof Versioned ? { body: result.body, etag: `"${result.etag}"` } : { body: result };
  };
  const sent = ({ body, etag }: Written): Answer => ({ status: success, text: JSON.stringify(body), etag });

  const attempt = async (): Promise<Answer> => {
    // One statement, the write and its audit entry: atomic on its own.
    if (key === undefined && route.oneStatement) return sent(await run(deps.db.prisma, deps.db.writeQueries));
    // Serialised inside the transaction: a body that cannot be sent rolls the write back.
    if (key === undefined) return deps.db.prisma.$transaction(async (tx) => sent(await run(tx)), transactionOptions(deps.config));
    const request = {
      userId: caller.id,
      key,
      route: `${route.method} ${route.path}`,
      fingerprint: fingerprint(route, req.body),
      now: deps.now(),
      retainHours: deps.config.idempotencyRetainHours,
    };
    return deps.db.prisma.$transaction(async (tx) => {
      const stored = await claimKey(tx, request);
      if (stored) return { ...stored, replayed: true };
      return runOnce(tx, request, route, success, () => run(tx));
    }, transactionOptions(deps.config));
  };
  const answer = await withFreshIdOnCollision(deps, attempt);
  // A write that succeeded recorded its event (an update that changed nothing, or a replay, at most an extra look at the outbox).
  if (!answer.replayed && answer.status < 300) deps.events.announce();
  if (answer.replayed) res.setHeader(REPLAYED_HEADER, "true");
  if (answer.etag) res.setHeader("ETag", answer.etag);
  if (answer.error) res.setHeader(ERROR_NAME_HEADER, answer.error);
  sendJsonText(res, answer.status, answer.text);
}

/** Attempts of a write whose new id collides with a row written past the id sequence (entities/constraints.ts). */
const ID_ATTEMPTS = 3;

/**
 * Runs the write again, whole, when the id its insert drew was already taken
 * (rows imported or written by hand past the sequence, with an insert in
 * flight across the import): the sequence is moved past the table's ids and
 * the write gets a fresh one. Nothing of the failed attempt was kept: its
 * statement, or its transaction, failed as a whole.
 */
async function withFreshIdOnCollision(deps: AppDeps, attempt: () => Promise<Answer>): Promise<Answer> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const collision = generatedKeyCollision(error);
      if (collision === undefined || n === ID_ATTEMPTS) throw error;
      deps.logger.warn({ table: collision.table }, "a new id was already taken (rows written past the id sequence): sequence moved past them, write retried");
      await deps.db.prisma.$queryRaw(advanceIdSequence(collision.table, collision.key, largestId(collision.table, collision.key)));
    }
  }
}

/**
 * Waiting for a connection counts against DB_CONNECT_TIMEOUT_MS, the whole
 * transaction against DB_STATEMENT_TIMEOUT_MS; past either, Prisma gives up
 * (P2028) and the client gets a 503.
 */
function transactionOptions(config: Config) {
  return { maxWait: config.dbConnectTimeoutMs, timeout: config.dbStatementTimeoutMs };
}
