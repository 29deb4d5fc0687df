import { api, call, type WebhookDelivery, type WebhookEndpoint } from "../api.js";
import { openDialog, secretBox } from "../dialog.js";
import { announce, dataTable, errorText, field, h, message, onSubmit, refresher, stamp, when } from "../dom.js";

const PAGE_SIZE = 25;

/** Webhooks: endpoints (add → secret shown once, remove), their deliveries (paged, filtered by endpoint), redeliver. */
export async function webhooksPage(main: HTMLElement): Promise<void> {
  const { body } = await call<{ endpoints: WebhookEndpoint[] }>("GET", api("admin/webhooks"));
  const notice = h("div", { class: "notices" });
  const refresh = refresher(main, webhooksPage);
  const deliveries = deliveriesSection(body.endpoints, refresh);
  main.replaceChildren(
    h("h1", {}, "Webhooks"),
    notice,
    addForm(refresh),
    h("h2", {}, `${body.endpoints.length} endpoint${body.endpoints.length === 1 ? "" : "s"}`),
    body.endpoints.length === 0 ? h("p", { class: "muted" }, "No endpoints: nothing is sent.") : endpointsTable(body.endpoints, refresh, deliveries.show),
    deliveries.element,
  );
  await deliveries.show(undefined);
}

function addForm(refresh: (text?: string) => Promise<void>): HTMLElement {
  const url = h("input", { name: "url", type: "url", required: true, maxlength: "2048", placeholder: "https://example.com/hooks/game", autocomplete: "off" });
  const events = h("input", { name: "events", autocomplete: "off", placeholder: "reward_log.created, form.created" });
  const problem = h("div");
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "add-title" },
    h("h2", { id: "add-title" }, "Add an endpoint"),
    h(
      "div",
      { class: "fields" },
      field("Receiver URL", url, "http or https; private addresses only if the service allows them"),
      field("Events (optional)", events, "Comma-separated event types; empty: every event"),
    ),
    problem,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Add endpoint")),
  );
  onSubmit(form, problem, async () => {
    const chosen = events.value
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean);
    const { body } = await call<{ endpoint: WebhookEndpoint; secret: string }>("POST", api("admin/webhooks/add"), { url: url.value.trim(), events: chosen });
    await openDialog({
      title: `Signing secret of webhook ${body.endpoint.id}`,
      content: [
        h("p", {}, "The receiver verifies each delivery's signature with this secret. It is shown only now: copy it to the receiver's configuration."),
        secretBox("Signing secret", body.secret, "Copy secret"),
      ],
      cancel: "",
      confirm: "I have copied it",
    });
    await refresh(`Added webhook ${body.endpoint.id}.`);
  });
  return form;
}

function endpointsTable(endpoints: WebhookEndpoint[], refresh: (text?: string) => Promise<void>, show: (id: number | undefined) => Promise<void>): HTMLElement {
  const head = ["Id", "URL", "Events", "Pending", "Delivered", "Failed", "Created", "Actions"];
  return dataTable(
    "webhooks",
    "Webhook endpoints",
    head,
    endpoints.map((e) =>
      h(
        "tr",
        { "data-webhook": String(e.id) },
        h("th", { scope: "row", "data-label": "Id" }, String(e.id)),
        h("td", { "data-label": "URL", class: "url" }, e.url),
        h("td", { "data-label": "Events" }, e.events.length ? e.events.join(", ") : "every event"),
        h("td", { "data-label": "Pending" }, String(e.pending)),
        h("td", { "data-label": "Delivered" }, String(e.delivered)),
        h("td", { "data-label": "Failed" }, String(e.failed)),
        h("td", { "data-label": "Created" }, stamp(e.createdAt)),
        h(
          "td",
          { "data-label": "Actions", class: "row-actions" },
          h(
            "button",
            { type: "button", class: "secondary small", "aria-label": `Deliveries of webhook ${e.id}`, onclick: () => void show(e.id) },
            "Deliveries",
          ),
          h("button", { type: "button", class: "danger small", "aria-label": `Remove webhook ${e.id}`, onclick: () => void remove(e, refresh) }, "Remove"),
        ),
      ),
    ),
  );
}

async function remove(endpoint: WebhookEndpoint, refresh: (text?: string) => Promise<void>): Promise<void> {
  const ok = await openDialog({
    title: `Remove webhook ${endpoint.id}?`,
    content: [h("p", {}, `Nothing more is sent to ${endpoint.url}; its deliveries, ${endpoint.pending} pending, are deleted with it.`)],
    confirm: "Remove",
    danger: true,
    onConfirm: async () => {
      await call("POST", api("admin/webhooks/remove"), { endpointId: endpoint.id });
      return true;
    },
  });
  if (ok) await refresh(`Removed webhook ${endpoint.id}.`);
}

/** The deliveries, newest first: of every endpoint or one, paged by cursor, with Refresh and Redeliver. */
function deliveriesSection(endpoints: WebhookEndpoint[], refresh: (text?: string) => Promise<void>) {
  const which = h(
    "select",
    { name: "endpoint" },
    h("option", { value: "" }, "every endpoint"),
    ...endpoints.map((e) => h("option", { value: String(e.id) }, `${e.id}: ${e.url}`)),
  );
  const results = h("div", { class: "results" });
  const notice = h("div");
  let previous: (string | undefined)[] = [];
  let current: string | undefined;
  const load = async (cursor: string | undefined) => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (which.value) query.set("endpointId", which.value);
    if (cursor) query.set("cursor", cursor);
    const { body } = await call<{ deliveries: WebhookDelivery[]; nextCursor: string | null }>("GET", api(`admin/webhooks/deliveries?${query}`));
    current = cursor;
    results.replaceChildren(deliveriesTable(body.deliveries, redeliver), pager(body.nextCursor));
  };
  const redeliver = async (d: WebhookDelivery) => {
    try {
      await call("POST", api("admin/webhooks/redeliver"), { deliveryId: d.id });
      const text = `Delivery ${d.id} will be sent again now.`;
      notice.replaceChildren(message("ok", text));
      announce(text);
      await load(current);
    } catch (error) {
      const shown = message("error", errorText(error));
      notice.replaceChildren(shown);
      shown.focus();
    }
  };
  const pager = (next: string | null) =>
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", disabled: previous.length === 0, onclick: () => void load(previous.pop()) }, "Newer"),
      h("button", { type: "button", class: "secondary", disabled: next === null, onclick: () => (previous.push(current), void load(next!)) }, "Older"),
    );
  const form = h(
    "form",
    { class: "card", role: "search", "aria-label": "Choose the deliveries shown" },
    h("div", { class: "fields" }, field("Deliveries of", which)),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", onclick: () => void refresh() }, "Refresh counts"),
      h("button", { type: "submit", class: "primary" }, "Show deliveries"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    previous = [];
    void load(undefined);
  });
  const show = async (id: number | undefined) => {
    which.value = id === undefined ? "" : String(id);
    previous = [];
    await load(undefined);
    if (id !== undefined) which.focus();
  };
  return { element: h("section", { "aria-labelledby": "deliveries-title" }, h("h2", { id: "deliveries-title" }, "Deliveries"), form, notice, results), show };
}

function deliveriesTable(deliveries: WebhookDelivery[], redeliver: (d: WebhookDelivery) => Promise<void>): HTMLElement {
  if (deliveries.length === 0) return h("p", { class: "muted" }, "No deliveries yet.");
  const head = ["Id", "Webhook", "Event", "Status", "Attempts", "Created", "Last attempt", "Last answer", "Actions"];
  return dataTable(
    "deliveries",
    "Webhook deliveries, newest first",
    head,
    deliveries.map((d) =>
      h(
        "tr",
        { "data-delivery": d.id },
        h("td", { "data-label": "Id" }, d.id),
        h("td", { "data-label": "Webhook" }, String(d.endpointId)),
        h("td", { "data-label": "Event" }, h("code", {}, d.type), h("small", {}, d.webhookId)),
        h(
          "td",
          { "data-label": "Status" },
          h("span", { class: `badge ${d.status}` }, d.status),
          d.nextAttemptAt ? h("small", {}, `next ${when(d.nextAttemptAt)}`) : null,
        ),
        h("td", { "data-label": "Attempts" }, String(d.attempts)),
        h("td", { "data-label": "Created" }, stamp(d.createdAt)),
        h("td", { "data-label": "Last attempt" }, stamp(d.lastAttemptAt)),
        h("td", { "data-label": "Last answer", class: "changes" }, [d.lastStatus ?? "", d.lastResponse ?? ""].join(" ").trim() || "—"),
        h(
          "td",
          { "data-label": "Actions", class: "row-actions" },
          d.status === "pending"
            ? h("span", { class: "muted" }, "being sent")
            : h(
                "button",
                { type: "button", class: "secondary small", "aria-label": `Redeliver delivery ${d.id}`, onclick: () => void redeliver(d) },
                "Redeliver",
              ),
        ),
      ),
    ),
  );
}
