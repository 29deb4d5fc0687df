import { type AuditSource, recordAudit } from "../audit/audit.js";
import { errors } from "../core/errors.js";
import type { DbClient, ReadClient } from "../db/client.js";
import { EVENT_TYPES, isEventType } from "../events/catalogue.js";
import { DELIVERIES_CHANNEL } from "../events/record.js";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { checkHost, RefusedTarget } from "./address-guard.js";
import { generateSecret, sealSecret } from "./secrets.js";

/**
 * Managing webhook endpoints and their deliveries: the functions the CLI
 * calls (and the admin routes will). Errors are ApiErrors naming the value.
 */
export interface WebhookSettings {
  webhooksAllowPrivate: boolean;
  webhooksSecretKey: string | undefined;
}

export interface EndpointSummary {
  id: number;
  url: string;
  /** [] means every event. */
  events: string[];
  createdAt: Date;
  pending: number;
  failed: number;
  delivered: number;
}

export interface DeliverySummary {
  id: string;
  endpointId: number;
  webhookId: string;
  type: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  createdAt: Date;
  lastAttemptAt: Date | null;
  /** For a pending delivery: when the next attempt is due (or its lease ends). */
  nextAttemptAt: Date | null;
  lastStatus: number | null;
  lastResponse: string | null;
}

/** The longest URL an endpoint may have (the column is varchar(2048)). */
export const MAX_URL = 2048;

/** The URL's form checked: http(s), no fragment, not too long; its href. */
export function parseEndpointUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: what failed to parse may still hold a credential (user info, a token).
    throw errors.validation("url: not a URL (expected http:// or https://, a host, then any path)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw errors.validation(`url: expected http:// or https://, not ${url.protocol}//`);
  if (url.hash) throw errors.validation("url: a fragment (#…) is never sent; leave it out");
  if (url.href.length > MAX_URL) throw errors.validation(`url: longer than ${MAX_URL} characters`);
  return url;
}

/**
 * The URL as it is shown (listings, the CLI, audit entries): its user info
 * and its query's values masked, as receivers often take a credential there
 * (`https://user:password@…`, `?token=…`, a bare `?<token>`): each parameter
 * reads `name=***`, one without a value `***`. The stored URL is sent whole.
 */
export function shownUrl(href: string): string {
  const url = URL.parse(href);
  // A restored or hand-edited row: said, never echoed (it may hold a credential).
  if (!url) return "(not a valid URL)";
  if (url.username !== "" || url.password !== "") {
    url.username = "***";
    url.password = "";
  }
  if (url.search !== "") {
    url.search = url.search
      .slice(1)
      .split("&")
      .map((part) => (part.includes("=") ? `${part.slice(0, part.indexOf("="))}=***` : part === "" ? "" : "***"))
      .join("&");
  }
  return url.href;
}

/**
 * The URL checked, form and host: a host that is not private (unless allowed).
 * It resolves the host (a DNS lookup, as slow as the name's servers): made
 * before a transaction opens, never inside one. Each delivery checks again
 * where it connects (address-guard.ts).
 */
export async function checkEndpointUrl(raw: string, allowPrivate: boolean): Promise<string> {
  const url = parseEndpointUrl(raw);
  try {
    await checkHost(url.hostname, allowPrivate);
  } catch (error) {
    if (error instanceof RefusedTarget) throw errors.validation(`url: ${error.message}`);
    throw errors.validation(`url: ${url.hostname} cannot be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return url.href;
}

export function checkEvents(events: readonly string[]): string[] {
  const unknown = events.filter((e) => !isEventType(e));
  if (unknown.length > 0) throw errors.validation(`events: unknown ${unknown.join(", ")}; known: ${EVENT_TYPES.join(", ")}`);
  return [...new Set(events)];
}

type AddInput = { url: string; events?: readonly string[] | undefined };
type Added = { endpoint: EndpointSummary; secret: string };

/** Adds an endpoint; the secret returned is the only time it is shown. */
export async function addEndpoint(prisma: PrismaClient, settings: WebhookSettings, input: AddInput, by: AuditSource): Promise<Added> {
  // The events first: an unknown one is a typo to fix before anything about the URL (whose check may wait on DNS).
  checkEvents(input.events ?? []);
  await checkEndpointUrl(input.url, settings.webhooksAllowPrivate);
  return prisma.$transaction((tx) => addEndpointIn(tx, settings, input, by));
}

/**
 * addEndpoint in the caller's transaction (an admin route's), whose URL
 * checkEndpointUrl has passed before the transaction opened (the route's
 * checkFirst).
 */
export async function addEndpointIn(tx: DbClient, settings: WebhookSettings, input: AddInput, by: AuditSource): Promise<Added> {
  const url = parseEndpointUrl(input.url).href;
  const events = checkEvents(input.events ?? []);
  const secret = generateSecret();
  const row = await tx.webhookEndpoint.create({ data: { url, events, secret: sealSecret(secret, settings.webhooksSecretKey) } });
  const shown = shownUrl(url);
  await recordAudit(tx, { ...by, action: "webhook.add", target: `webhook:${row.id}`, changes: { url: shown, events } });
  return { endpoint: { id: row.id, url: shown, events, createdAt: row.createdAt, pending: 0, failed: 0, delivered: 0 }, secret };
}

export async function listEndpoints(prisma: ReadClient): Promise<EndpointSummary[]> {
  const rows = await prisma.$queryRaw<(Omit<EndpointSummary, "events"> & { events: string[] })[]>`
    SELECT ep.id, ep.url, ep.events, ep."createdAt",
           count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
           count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
           count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered
      FROM webhook_endpoints ep LEFT JOIN webhook_deliveries d ON d."endpointId" = ep.id
     GROUP BY ep.id ORDER BY ep.id`;
  return rows.map((row) => ({ ...row, url: shownUrl(row.url) }));
}

/** Removes an endpoint and its deliveries (pending ones are not sent). */
export function removeEndpoint(prisma: PrismaClient, id: number, by: AuditSource): Promise<{ id: number; url: string }> {
  return prisma.$transaction((tx) => removeEndpointIn(tx, id, by));
}

export async function removeEndpointIn(tx: DbClient, id: number, by: AuditSource): Promise<{ id: number; url: string }> {
  const [row] = await tx.$queryRaw<{ id: number; url: string }[]>`DELETE FROM webhook_endpoints WHERE id = ${id} RETURNING id, url`;
  if (!row) throw errors.notFound(`Webhook ${id}`);
  const url = shownUrl(row.url);
  await recordAudit(tx, { ...by, action: "webhook.remove", target: `webhook:${id}`, changes: { url } });
  return { id, url };
}

/** A delivery as listed (DeliverySummary), from webhook_deliveries d joined with its event e. */
const DELIVERY = Prisma.sql`
  SELECT d.id::text AS id, d."endpointId", e."messageId" AS "webhookId", e.type, d.status, d.attempts, d."createdAt", d."lastAttemptAt",
         CASE WHEN d.status = 'pending' THEN d."nextAttemptAt" END AS "nextAttemptAt", d."lastStatus", d."lastResponse"
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d."eventId"`;

/** The newest deliveries first (older than `before`, a delivery id, when given), of one endpoint or all. */
export async function listDeliveries(
  prisma: ReadClient,
  query: { endpointId?: number | undefined; limit: number; before?: string | undefined },
): Promise<DeliverySummary[]> {
  const endpointId = query.endpointId ?? null;
  if (endpointId !== null) {
    const [found] = await prisma.$queryRaw<unknown[]>`SELECT 1 FROM webhook_endpoints WHERE id = ${endpointId}`;
    if (!found) throw errors.notFound(`Webhook ${endpointId}`);
  }
  const before = query.before ?? null;
  return prisma.$queryRaw<DeliverySummary[]>`${DELIVERY}
     WHERE (${endpointId}::int IS NULL OR d."endpointId" = ${endpointId}::int)
       AND (${before}::bigint IS NULL OR d.id < ${before}::bigint)
     ORDER BY d.id DESC
     LIMIT ${query.limit}`;
}

/**
 * Sends a delivered or failed delivery again, now, with the same webhook-id
 * (a receiver that kept it drops it as a duplicate), retried as a new one.
 */
export function redeliver(prisma: PrismaClient, id: bigint, by: AuditSource): Promise<DeliverySummary> {
  return prisma.$transaction((tx) => redeliverIn(tx, id, by));
}

export async function redeliverIn(tx: DbClient, id: bigint, by: AuditSource): Promise<DeliverySummary> {
  const [row] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM webhook_deliveries WHERE id = ${id} FOR UPDATE`;
  if (!row) throw errors.notFound(`Webhook delivery ${id}`);
  if (row.status === "pending") throw errors.conflict(`Webhook delivery ${id} is still pending: it is being retried already`);
  await tx.$executeRaw`
    UPDATE webhook_deliveries SET status = 'pending', "nextAttemptAt" = now(), "retrySince" = now(), "deliveredAt" = NULL WHERE id = ${id}`;
  await recordAudit(tx, { ...by, action: "webhook.redeliver", target: `webhook_delivery:${id}`, changes: { previousStatus: row.status } });
  await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`;
  const [summary] = await tx.$queryRaw<DeliverySummary[]>`${DELIVERY} WHERE d.id = ${id}`;
  return summary!;
}
