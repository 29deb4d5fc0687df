import { type AuditRecord, readAudit } from "../audit/audit.js";
import { ApiError } from "../core/errors.js";
import type { DbClient } from "../db/client.js";
import { formatTimestamp, parseTimestamp } from "../fields/timestamp.js";
import { parse, table, terminalJson, UsageError } from "./args.js";

const DURATION = /^(\d{1,6})(m|h|d)$/;
const DURATION_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`: an ISO 8601 date-time, read as the API reads them, or a duration back from now. */
function parseSince(value: string, now: Date): Date {
  const duration = DURATION.exec(value);
  if (duration) return new Date(now.getTime() - Number(duration[1]) * DURATION_MS[duration[2] as keyof typeof DURATION_MS]);
  const at = parseTimestamp(value);
  if (!at) {
    throw new ApiError(
      "VALIDATION",
      `Invalid --since '${value}': expected an ISO 8601 date-time such as 2026-11-22T09:00:00Z, or a duration such as 30m, 24h or 7d`,
    );
  }
  return at;
}

/** `audit`: the newest entries of the audit log, filtered, as a table or one JSON object a line. */
export async function auditCommand(
  args: string[],
  db: DbClient,
  now: () => Date,
  io: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  const { values, positionals } = parse(args, {
    since: { type: "string" },
    user: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("audit takes no argument (filter with --since and --user)");
  const since = values.since === undefined ? undefined : parseSince(values.since, now());
  const limitText = values.limit ?? "100";
  const limit = Number(limitText);
  if (!/^\d{1,6}$/.test(limitText) || limit < 1 || limit > 100_000) {
    throw new ApiError("VALIDATION", `Invalid --limit '${limitText}': expected a whole number from 1 to 100000`);
  }
  const entries = await readAudit(db, { since, user: values.user || undefined, limit });
  if (values.json) io.stdout(entries.map((e) => `${terminalJson({ ...e, at: e.at.toISOString() })}\n`).join(""));
  else io.stdout(entries.length === 0 ? "No audit entries.\n" : table(entries.map(auditRow)));
  if (entries.length === limit) io.stderr(`Showing the newest ${limit} entries; use --limit or --since for others.\n`);
  return 0;
}

/** Long changes (form answers) are cut in the table; --json has them whole. */
const CHANGES_WIDTH = 100;

function auditRow(e: AuditRecord): Record<string, string> {
  const changes = JSON.stringify(e.changes);
  return {
    at: formatTimestamp(e.at),
    actor: e.actor,
    action: e.action,
    target: e.target,
    changes: changes.length > CHANGES_WIDTH ? `${changes.slice(0, CHANGES_WIDTH - 1)}…` : changes,
    request: e.requestId ?? "",
    client: e.clientAddress ?? "",
  };
}
