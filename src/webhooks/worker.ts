import type { Config } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { annotate, contextOf, currentTraceparent, inSpan, SpanKind, tracing } from "../core/tracing.js";
import { type Database, ListenUnavailableError, type Subscription } from "../db/database.js";
import { DELIVERIES_CHANNEL } from "../events/record.js";
import { type AttemptResult, attempt } from "./attempt.js";
import { openSecret, SecretUnavailable } from "./secrets.js";

/** How often the outbox is looked at without a notification (retries that came due, expired leases, a lost LISTEN). */
export const POLL_MS = 500;
/** What a delivery shows for an answer the database refused to store (the warning logged then says why). */
export const UNRECORDABLE_ANSWER = "(the answer could not be recorded: see the service's log)";
/** Added to the attempt's timeout to make its lease: past it, another instance may take the delivery over. */
const LEASE_MARGIN_MS = 5_000;

export type Outcome = "delivered" | "retrying" | "failed";

interface Claimed {
  id: bigint;
  attempts: number;
  retrySince: Date;
  messageId: string;
  type: string;
  data: string;
  createdAt: Date;
  endpointId: number;
  url: string;
  secret: string;
  /** The write's trace (tracing on): the attempt continues it, and sends it to the receiver. */
  traceparent: string | null;
}

/** The wait before attempt n+1 after n failed ones: exponential, capped, with jitter (half fixed, half random). */
export function backoffMs(failedAttempts: number, config: Pick<Config, "webhooksBackoffBaseMs" | "webhooksBackoffMaxMs">, random = Math.random): number {
  const full = Math.min(config.webhooksBackoffMaxMs, config.webhooksBackoffBaseMs * 2 ** Math.min(failedAttempts - 1, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * Delivers the outbox: claims due deliveries with FOR UPDATE SKIP LOCKED (so
 * instances sharing the database never take the same one), leases them for
 * the attempt's timeout plus a margin (a crashed instance's deliveries come
 * due again when the lease ends), posts them, and records the outcome only if
 * the lease is still its own. Wakes on LISTEN webhook_deliveries (the
 * writing instance's announcement, after its commit) and polls.
 */
export class DeliveryWorker {
  private inFlight = new Set<Promise<void>>();
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private subscription: Subscription | undefined;
  private claiming: Promise<void> | undefined;
  private again = false;
  /** Whether any endpoint is registered, read at each poll. */
  private endpointsExist = true;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly onOutcome: (outcome: Outcome) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    // Without deliveries (WEBHOOKS_CONCURRENCY=0) the outbox is still pruned: the event stream fills it too.
    if (this.config.webhooksConcurrency === 0) {
      this.schedule();
      return;
    }
    try {
      this.subscription = await this.db.subscribe(DELIVERIES_CHANNEL, {
        // Every write announces its events here (stream/channels.ts): only worth a look when an endpoint may want them.
        message: () => {
          if (this.endpointsExist) this.kick();
        },
        lost: (error) => this.logger.warn({ err: error }, "webhooks: LISTEN connection lost; polling only"),
      });
    } catch (error) {
      // ListenUnavailableError was said once at start (db.checkPooler).
      if (!(error instanceof ListenUnavailableError)) this.logger.warn({ err: error }, "webhooks: LISTEN failed; polling only");
    }
    this.schedule();
    this.kick();
  }

  /** Stops claiming; attempts in flight finish (each within its timeout). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.subscription?.close().catch(() => undefined);
    await this.claiming;
    await Promise.all([...this.inFlight]);
  }

  private schedule(): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.kick();
      this.db.prisma.$queryRaw<{ found: boolean }[]>`SELECT EXISTS (SELECT 1 FROM webhook_endpoints) AS found`.then(
        ([row]) => (this.endpointsExist = row?.found ?? true),
        () => (this.endpointsExist = true),
      );
      this.schedule();
    }, POLL_MS);
    this.timer.unref();
  }

  /** Claims as many due deliveries as there are free slots; once at a time, again if asked meanwhile. */
  kick(): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claimAll()
      .catch((error: unknown) => this.logger.warn({ err: error }, "webhooks: claiming deliveries failed; will retry"))
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async claimAll(): Promise<void> {
    for (;;) {
      const free = this.config.webhooksConcurrency - this.inFlight.size;
      if (free <= 0 || this.stopping) return;
      const claimed = await this.claim(free);
      for (const delivery of claimed) {
        const run = this.deliver(delivery).catch((error: unknown) =>
          this.logger.error({ err: error, delivery: String(delivery.id) }, "webhooks: recording a delivery failed; it will be retried"),
        );
        this.inFlight.add(run);
        void run.finally(() => {
          this.inFlight.delete(run);
          this.kick();
        });
      }
      if (claimed.length < free) return;
    }
  }

  private claim(limit: number): Promise<Claimed[]> {
    const leaseMs = this.config.webhooksTimeoutMs + LEASE_MARGIN_MS;
    return this.db.prisma.$queryRaw<Claimed[]>`
      UPDATE webhook_deliveries d
         SET "nextAttemptAt" = now() + ${leaseMs} * interval '1 millisecond', attempts = d.attempts + 1, "lastAttemptAt" = now()
        FROM (SELECT id FROM webhook_deliveries
               WHERE status = 'pending' AND "nextAttemptAt" <= now()
               ORDER BY "nextAttemptAt", id
               LIMIT ${limit}
                 FOR UPDATE SKIP LOCKED) due,
             webhook_events e, webhook_endpoints ep
       WHERE d.id = due.id AND e.id = d."eventId" AND ep.id = d."endpointId"
      RETURNING d.id, d.attempts, d."retrySince", e."messageId", e.type, e.data, e."createdAt", e.traceparent, ep.id AS "endpointId", ep.url, ep.secret`;
  }

  private deliver(d: Claimed): Promise<void> {
    if (!tracing.on) return this.deliverNow(d);
    // In the trace of the write that recorded the event (a root span when it had none).
    const attributes = { "webhook.endpoint.id": d.endpointId, "webhook.event.type": d.type, "webhook.attempt": d.attempts };
    return inSpan("webhook.deliver", attributes, () => this.deliverNow(d), { kind: SpanKind.PRODUCER, parent: contextOf(d.traceparent) });
  }

  private async deliverNow(d: Claimed): Promise<void> {
    let result: AttemptResult;
    try {
      const secret = openSecret(d.secret, this.config.webhooksSecretKey);
      result = await attempt(d.url, secret, d, {
        timeoutMs: this.config.webhooksTimeoutMs,
        allowPrivate: this.config.webhooksAllowPrivate,
        userAgent: "game-community-api-webhooks",
        traceparent: currentTraceparent(),
      });
    } catch (error) {
      if (!(error instanceof SecretUnavailable)) throw error;
      result = { ok: false, status: null, excerpt: `cannot sign: ${error.message}` };
    }
    const retryUntil = d.retrySince.getTime() + this.config.webhooksRetryForMs;
    const wait = backoffMs(d.attempts, this.config);
    const outcome: Outcome = result.ok ? "delivered" : result.final || Date.now() + wait > retryUntil ? "failed" : "retrying";
    // Only while the lease is ours (attempts unchanged): a delivery taken over after a stall is the other instance's.
    const record = (answer: string) => this.db.prisma.$executeRaw`
      UPDATE webhook_deliveries
         SET status = ${outcome === "retrying" ? "pending" : outcome},
             "nextAttemptAt" = CASE WHEN ${outcome === "retrying"} THEN now() + ${wait} * interval '1 millisecond' ELSE "nextAttemptAt" END,
             "lastStatus" = ${result.status}, "lastResponse" = ${answer},
             "deliveredAt" = CASE WHEN ${result.ok} THEN now() ELSE NULL END
       WHERE id = ${d.id} AND attempts = ${d.attempts} AND status = 'pending'`;
    try {
      await record(result.excerpt);
    } catch (error) {
      // An answer the database refuses must not leave the delivery due again at every lease's end
      // (never delivered, failed or pruned): the outcome is recorded without it. If that fails too,
      // the database itself is failing, and the lease's end retries the delivery.
      this.logger.warn({ err: error, delivery: String(d.id) }, "webhooks: the receiver's answer could not be recorded; the outcome is recorded without it");
      await record(UNRECORDABLE_ANSWER);
    }
    this.onOutcome(outcome);
    annotate({ "webhook.outcome": outcome, ...(result.status === null ? {} : { "http.response.status_code": result.status }) });
    if (!result.ok) annotate({ "error.type": result.status === null ? "no answer" : String(result.status) });
    if (!result.ok) {
      // Never the secret, nor the body: which delivery, where (without the URL's query), and what came back.
      const target = URL.parse(d.url);
      this.logger.warn(
        {
          delivery: String(d.id),
          endpoint: d.endpointId,
          webhookId: d.messageId,
          type: d.type,
          target: target ? `${target.origin}${target.pathname}` : "(not a URL)",
          attempt: d.attempts,
          status: result.status,
          answer: result.excerpt,
          next: outcome === "failed" ? "failed: no more retries" : `retry in ${Math.round(wait / 1000)} s`,
        },
        "webhook delivery attempt failed",
      );
    }
  }
}
