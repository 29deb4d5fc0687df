import type { AuditSource } from "../audit/audit.js";
import type { Config } from "../core/config.js";
import { ApiError } from "../core/errors.js";
import { INT32_MAX } from "../fields/rules.js";
import { formatTimestamp } from "../fields/timestamp.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { addEndpoint, type DeliverySummary, listDeliveries, listEndpoints, redeliver, removeEndpoint } from "../webhooks/manage.js";
import { parse, printable, table, terminalJson, UsageError } from "./args.js";

export const WEBHOOK_USAGE = `  webhook add <url> [--events TYPE,…]   send events to this URL (every type unless --events); prints
                                         its id, then its signing secret, shown only once
  webhook list [--json]                  the endpoints, their events and delivery counts
  webhook remove <id>                    stop sending to an endpoint (its pending deliveries are dropped)
  webhook deliveries [<id>] [--limit N] [--json]
                                         the newest deliveries (of one endpoint): status, attempts, last answer
  webhook redeliver <delivery-id>        send a delivered or failed delivery again (same webhook-id)`;

const whole = (what: string, raw: string | undefined, max = INT32_MAX): number => {
  if (raw === undefined || !/^\d{1,10}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new ApiError("VALIDATION", `Invalid ${what} '${raw ?? ""}': expected a whole number from 1 to ${max}`);
  }
  return Number(raw);
};
const date = (d: Date | null) => (d ? formatTimestamp(d) : "");

function deliveryRow(d: DeliverySummary): Record<string, string> {
  return {
    id: d.id,
    webhook: String(d.endpointId),
    event: d.type,
    "webhook-id": d.webhookId,
    status: d.status,
    attempts: String(d.attempts),
    created: date(d.createdAt),
    "last attempt": date(d.lastAttemptAt),
    next: date(d.nextAttemptAt),
    answer: d.lastStatus === null ? (d.lastResponse ?? "") : `${d.lastStatus} ${d.lastResponse ?? ""}`.trim(),
  };
}

/** `webhook …`: the operator's management of webhook endpoints (src/webhooks/manage.ts). */
export async function webhookCommand(
  args: string[],
  prisma: PrismaClient,
  config: Config,
  by: AuditSource,
  io: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "add": {
      const { values, positionals } = parse(rest, { events: { type: "string" } });
      if (positionals.length !== 1) throw new UsageError("webhook add takes one URL");
      const events = values.events
        ?.split(",")
        .map((e) => e.trim())
        .filter((e) => e.length > 0);
      const { endpoint, secret } = await addEndpoint(prisma, config, { url: positionals[0]!, events }, by);
      io.stdout(`${endpoint.id}\n${secret}\n`);
      io.stderr(
        `Added webhook ${endpoint.id} → ${endpoint.url} (${endpoint.events.length ? endpoint.events.join(", ") : "every event"}). ` +
          "The secret above (its receiver verifies signatures with it) is shown only once.\n",
      );
      return 0;
    }
    case "list": {
      const { values, positionals } = parse(rest, { json: { type: "boolean" } });
      if (positionals.length > 0) throw new UsageError("webhook list takes no argument");
      const list = await listEndpoints(prisma);
      if (values.json) io.stdout(`${terminalJson(list, 2)}\n`);
      else if (list.length === 0) io.stdout("No webhooks.\n");
      else {
        io.stdout(
          table(
            list.map((e) => ({
              id: String(e.id),
              url: e.url,
              events: e.events.length ? e.events.join(",") : "all",
              created: date(e.createdAt),
              pending: String(e.pending),
              delivered: String(e.delivered),
              failed: String(e.failed),
            })),
          ),
        );
      }
      return 0;
    }
    case "remove": {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError("webhook remove takes one webhook id");
      const removed = await removeEndpoint(prisma, whole("webhook id", positionals[0]), by);
      io.stdout(`Removed webhook ${removed.id} (${removed.url}).\n`);
      return 0;
    }
    case "deliveries": {
      const { values, positionals } = parse(rest, { limit: { type: "string" }, json: { type: "boolean" } });
      if (positionals.length > 1) throw new UsageError("webhook deliveries takes at most one webhook id");
      const endpointId = positionals[0] === undefined ? undefined : whole("webhook id", positionals[0]);
      const limit = whole("--limit", values.limit ?? "50", 100_000);
      const list = await listDeliveries(prisma, { endpointId, limit });
      if (values.json) io.stdout(list.map((d) => `${terminalJson(d)}\n`).join(""));
      else io.stdout(list.length === 0 ? "No deliveries.\n" : table(list.map(deliveryRow)));
      return 0;
    }
    case "redeliver": {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError("webhook redeliver takes one delivery id");
      const id = BigInt(whole("delivery id", positionals[0], Number.MAX_SAFE_INTEGER));
      const delivery = await redeliver(prisma, id, by);
      io.stdout(`Delivery ${delivery.id} (${printable(delivery.type)}, ${printable(delivery.webhookId)}) will be sent again now.\n`);
      return 0;
    }
    default:
      throw new UsageError(sub ? `Unknown webhook command '${sub}'` : "webhook needs a command: add, list, remove, deliveries or redeliver");
  }
}
