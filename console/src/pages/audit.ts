import { api, call, type AuditEntry } from "../api.js";
import { dataTable, field, h, when } from "../dom.js";

interface Filters {
  actor: string;
  action: string;
  from: string;
  to: string;
}

const ACTIONS = ["", "api_user.register", "api_user.rotate", "api_user.revoke", "api_user.allow_ip", "api_user.refused_ip", "cosmetic.update", "world.update", "form.create", "reward_log.create", "data.import", "webhook.add", "webhook.remove", "webhook.redeliver"];
const PAGE_SIZE = 25;

/** A datetime-local value (the browser's local time) as ISO 8601 in UTC. */
const iso = (local: string) => (local ? new Date(local).toISOString() : "");

/** The audit log: filters (actor, action, time range) and paging by cursor. */
export async function auditPage(main: HTMLElement): Promise<void> {
  const actor = h("input", { name: "actor", autocomplete: "off" });
  const action = h("select", { name: "action" }, ...ACTIONS.map((a) => h("option", { value: a }, a || "any")));
  const from = h("input", { name: "from", type: "datetime-local", step: "1" });
  const to = h("input", { name: "to", type: "datetime-local", step: "1" });
  const results = h("div", { class: "results" });
  const form = h(
    "form",
    { class: "card", role: "search", "aria-label": "Filter the audit log" },
    h("div", { class: "fields" }, field("Actor", actor), field("Action", action), field("From (your time)", from), field("Until (your time)", to)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Filter")),
  );
  // Cursors of the pages before this one, to go back.
  let previous: (string | undefined)[] = [];
  let current: string | undefined;
  const load = async (cursor: string | undefined) => {
    const filters: Filters = { actor: actor.value.trim(), action: action.value, from: iso(from.value), to: iso(to.value) };
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
    ["When (UTC)", "Actor", "Action", "Target", "Changes", "Request"],
    entries.map((e) =>
      h(
        "tr",
        {},
        h("td", { "data-label": "When" }, when(e.at)),
        h("td", { "data-label": "Actor" }, e.actor),
        h("td", { "data-label": "Action" }, h("code", {}, e.action)),
        h("td", { "data-label": "Target" }, e.target),
        h("td", { "data-label": "Changes" }, h("code", { class: "changes" }, JSON.stringify(e.changes))),
        h("td", { "data-label": "Request" }, e.requestId ?? "", e.clientAddress ? h("small", {}, e.clientAddress) : null),
      ),
    ),
  );
}
