import { type AuditEntry, api, call } from "../api.js";
import { dataTable, field, h, message, stamp, when } from "../dom.js";

interface Filters {
  actor: string;
  action: string;
  from: string;
  to: string;
}

const ACTIONS = [
  "",
  "api_user.register",
  "api_user.rotate",
  "api_user.revoke",
  "api_user.allow_ip",
  "api_user.refused_ip",
  "cosmetic.update",
  "world.update",
  "form.create",
  "reward_log.create",
  "data.import",
  "webhook.add",
  "webhook.remove",
  "webhook.redeliver",
];
const PAGE_SIZE = 25;

/**
 * A filter's date as ISO 8601 in UTC, as the table shows them: 2026-11-25, 2026-11-25 04:06,
 * 2026-11-25T04:06:12Z or with an offset. No zone means UTC (never the browser's local time).
 */
const DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i;
export function utcIso(text: string): string | undefined {
  const m = DATE.exec(text.trim());
  if (!m) return undefined;
  const zone = !m[3] || /^(z|utc)$/i.test(m[3]) ? "Z" : m[3];
  const at = new Date(`${m[1]}T${m[2] ?? "00:00"}${zone}`);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** A value of an entry, readable (dates in the table's format, lists joined). */
function shown(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "string") return /^\d{4}-\d{2}-\d{2}T/.test(value) ? when(value) : value;
  if (Array.isArray(value)) return value.length ? value.map(shown).join(", ") : "none";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

const dated = (value: unknown): value is string => typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value);
const valueOf = (value: unknown, side: "before" | "after") => h("span", { class: side }, dated(value) ? stamp(value) : shown(value));

/**
 * An entry's changes: each field with the value written, and, for an update, the value it replaced
 * (before → after; "unchanged" when the same). Entries without `before` (creations, older entries) show
 * the value written alone.
 */
function changesList(changes: Record<string, unknown>, before: Record<string, unknown> | null): HTMLElement {
  const entries = Object.entries(changes);
  if (entries.length === 0) return h("span", { class: "muted" }, "—");
  const change = (name: string, after: unknown) => {
    if (!before || !(name in before)) return h("dd", {}, valueOf(after, "after"));
    if (shown(before[name]) === shown(after)) return h("dd", {}, valueOf(after, "after"), " ", h("span", { class: "muted" }, "unchanged"));
    return h(
      "dd",
      { class: "diff" },
      h("span", { class: "sr-only" }, "from "),
      valueOf(before[name], "before"),
      h("span", { class: "arrow", "aria-hidden": "true" }, " → "),
      h("span", { class: "sr-only" }, " to "),
      valueOf(after, "after"),
    );
  };
  return h("dl", { class: "changes" }, ...entries.flatMap(([name, after]) => [h("dt", {}, name), change(name, after)]));
}

/** The audit log: filters (actor, action, time range) and paging by cursor. */
export async function auditPage(main: HTMLElement): Promise<void> {
  const actor = h("input", { name: "actor", autocomplete: "off" });
  const action = h("select", { name: "action" }, ...ACTIONS.map((a) => h("option", { value: a }, a || "any")));
  const from = h("input", { name: "from", autocomplete: "off", placeholder: "2026-11-25 or 2026-11-25T04:06Z", inputmode: "numeric" });
  const to = h("input", { name: "to", autocomplete: "off", placeholder: "2026-11-25T18:00Z", inputmode: "numeric" });
  const results = h("div", { class: "results" });
  const problem = h("div");
  const form = h(
    "form",
    { class: "card", role: "search", "aria-label": "Filter the audit log" },
    h(
      "div",
      { class: "fields" },
      field("Actor", actor),
      field("Action", action),
      field("From (UTC)", from, "ISO 8601; no zone means UTC"),
      field("Until (UTC)", to, "ISO 8601; no zone means UTC"),
    ),
    problem,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Filter")),
  );
  // Cursors of the pages before this one, to go back.
  let previous: (string | undefined)[] = [];
  let current: string | undefined;
  const load = async (cursor: string | undefined) => {
    const dates = { From: from.value.trim(), Until: to.value.trim() };
    const bad = Object.entries(dates)
      .filter(([, text]) => text && !utcIso(text))
      .map(([name]) => name);
    problem.replaceChildren(
      ...(bad.length ? [message("error", `${bad.join(" and ")}: expected an ISO 8601 date in UTC, such as 2026-11-25 or 2026-11-25T04:06:12Z`)] : []),
    );
    if (bad.length) return;
    const filters: Filters = { actor: actor.value.trim(), action: action.value, from: utcIso(dates.From) ?? "", to: utcIso(dates.Until) ?? "" };
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    for (const [name, value] of Object.entries(filters) as [string, string][]) if (value) query.set(name, value);
    if (cursor) query.set("cursor", cursor);
    const { body } = await call<{ entries: AuditEntry[]; nextCursor: string | null }>("GET", api(`admin/audit?${query}`));
    current = cursor;
    results.replaceChildren(table(body.entries), pager(body.nextCursor));
  };
  const pager = (next: string | null) =>
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", disabled: previous.length === 0, onclick: () => void load(previous.pop()) }, "Newer"),
      h("button", { type: "button", class: "secondary", disabled: next === null, onclick: () => (previous.push(current), void load(next!)) }, "Older"),
    );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    previous = [];
    void load(undefined);
  });
  main.replaceChildren(h("h1", {}, "Audit log"), form, results);
  await load(undefined);
}

function table(entries: AuditEntry[]): HTMLElement {
  if (entries.length === 0) return h("p", { class: "muted" }, "No entries match.");
  return dataTable(
    "audit",
    "Audit entries, newest first",
    ["When (UTC)", "Actor", "Action", "Target", "Changes (before → after)", "Request"],
    entries.map((e) =>
      h(
        "tr",
        {},
        h("td", { "data-label": "When" }, stamp(e.at)),
        h("td", { "data-label": "Actor", class: "nowrap" }, e.actor),
        h("td", { "data-label": "Action" }, h("code", {}, e.action)),
        h("td", { "data-label": "Target", class: "nowrap" }, e.target),
        h("td", { "data-label": "Changes" }, changesList(e.changes, e.before)),
        h("td", { "data-label": "Request" }, e.requestId ?? "", e.clientAddress ? h("small", {}, e.clientAddress) : null),
      ),
    ),
  );
}
