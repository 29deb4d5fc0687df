import { api, call, type ErasureReceipt, type PlayerExport } from "../api.js";
import { openDialog } from "../dialog.js";
import { announce, dataTable, failureIn, field, h, message, onSubmit, stamp, when } from "../dom.js";

const PAGE_SIZE = 25;

/** How the admin named the player: by id or by pseudo, never both (the routes take one of the two). */
type Selector = { id: number } | { pseudo: string };

/** The object URL of the last export's file: revoked when another replaces it, or when the page is left. */
let exportUrl: string | undefined;
function forgetExport(): void {
  if (exportUrl) URL.revokeObjectURL(exportUrl);
  exportUrl = undefined;
}

/** Players (GDPR): a player's export (downloaded as a file, its counts shown), their erasure (confirmed by typing), the receipts. */
export async function playersPage(main: HTMLElement): Promise<void> {
  forgetExport();
  const page = location.hash;
  const leave = () => {
    if (location.hash === page) return;
    forgetExport();
    window.removeEventListener("hashchange", leave);
  };
  window.addEventListener("hashchange", leave);
  const receipts = receiptsSection();
  const result = h("div", { class: "results" });
  main.replaceChildren(
    h("h1", {}, "Players"),
    finder(result, () => receipts.load(undefined)),
    result,
    receipts.element,
  );
  await receipts.load(undefined);
}

function finder(result: HTMLElement, reloadReceipts: () => Promise<void>): HTMLElement {
  const pseudo = h("input", { name: "pseudo", maxlength: "64", autocomplete: "off", spellcheck: "false" });
  const id = h("input", { name: "id", type: "number", min: "1", step: "1", inputmode: "numeric", autocomplete: "off" });
  const problem = h("div");
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "find-title" },
    h("h2", { id: "find-title" }, "Find a player"),
    h("p", { class: "muted" }, "By pseudo or by id: fill in one of the two."),
    h("div", { class: "fields" }, field("Pseudo", pseudo, "Regardless of case"), field("Id", id, "The player's number")),
    problem,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "danger", onclick: () => void failureIn(problem, () => erase(selected(), result, reloadReceipts)) }, "Erase…"),
      h("button", { type: "submit", class: "primary" }, "Export"),
    ),
  );
  const selected = (): Selector => {
    const name = pseudo.value.trim();
    const number = id.value.trim();
    if (name && number) throw new Error("Fill in the pseudo or the id, not both.");
    if (!name && !number) throw new Error("Fill in the player's pseudo or id.");
    if (name) return { pseudo: name };
    if (!/^\d+$/.test(number) || Number(number) < 1) throw new Error("Id: expected a whole number, 1 or more.");
    return { id: Number(number) };
  };
  onSubmit(form, problem, () => exportPlayer(selected(), result));
  return form;
}

const named = (who: Selector) => ("id" in who ? `player ${who.id}` : who.pseudo);

async function exportPlayer(who: Selector, result: HTMLElement): Promise<void> {
  result.replaceChildren();
  forgetExport();
  const { body } = await call<PlayerExport>("POST", api("admin/players/export"), who);
  const { manifest } = body;
  const name = `player-${manifest.player.id}-export.json`;
  exportUrl = URL.createObjectURL(new Blob([JSON.stringify(body, null, 2)], { type: "application/json" }));
  const link = h("a", { href: exportUrl, download: name }, `Download ${name}`);
  result.replaceChildren(
    h(
      "section",
      { class: "card export", "aria-labelledby": "export-title" },
      h("h2", { id: "export-title" }, `Export of ${manifest.player.pseudo} (id ${manifest.player.id})`),
      h("p", {}, `Made ${when(manifest.madeAt)} by ${manifest.madeBy}, recorded in the audit log. It holds personal data: hand it to the player only.`),
      countsList("Rows per part", manifest.counts),
      h("p", {}, link),
    ),
  );
  link.click();
  announce(`Exported ${manifest.player.pseudo}: ${name}.`);
}

async function erase(who: Selector, result: HTMLElement, reloadReceipts: () => Promise<void>): Promise<void> {
  const expected = "id" in who ? String(who.id) : who.pseudo;
  const typed = h("input", { name: "confirm", autocomplete: "off", spellcheck: "false", required: true });
  let receipt: ErasureReceipt | undefined;
  const ok = await openDialog({
    title: `Erase ${named(who)}?`,
    content: [
      h(
        "p",
        {},
        "This is irreversible: their statistics, form answers, reward logs, worlds and the player are deleted, and every copy " +
          "(audit entries, events, webhook deliveries) is emptied of their data. There is no undo; a restore of an older backup erases them again.",
      ),
      field(`Type ${expected} to confirm`, typed, "id" in who ? "The player's id, as given" : "The pseudo, as given"),
    ],
    confirm: "Erase for ever",
    danger: true,
    onConfirm: async () => {
      if (typed.value.trim() !== expected) throw new Error(`Type ${expected} exactly to confirm: nothing was erased.`);
      receipt = (await call<ErasureReceipt>("POST", api("admin/players/erase"), who)).body;
      return true;
    },
  });
  if (!ok || !receipt) return;
  result.replaceChildren(receiptCard(receipt));
  const text = `Erased player ${receipt.playerId} (receipt ${receipt.id}).`;
  result.prepend(message("ok", text));
  announce(text);
  await reloadReceipts();
}

function receiptCard(r: ErasureReceipt): HTMLElement {
  return h(
    "section",
    { class: "card receipt", "aria-labelledby": "receipt-title" },
    h("h2", { id: "receipt-title" }, `Receipt ${r.id}`),
    h(
      "dl",
      { class: "counts" },
      h("dt", {}, "Player id"),
      h("dd", {}, String(r.playerId)),
      h("dt", {}, "Erased"),
      h("dd", {}, when(r.erasedAt)),
      h("dt", {}, "By"),
      h("dd", {}, r.erasedBy),
    ),
    countsList("Rows removed", r.removed),
    countsList("Copies scrubbed", r.scrubbed),
  );
}

/** Counts per part, as a titled list (part, number). */
function countsList(title: string, counts: Record<string, number>): HTMLElement {
  const entries = Object.entries(counts);
  return h(
    "div",
    { class: "counts-block" },
    h("h3", {}, title),
    entries.length === 0
      ? h("p", { class: "muted" }, "none")
      : h("dl", { class: "counts" }, ...entries.flatMap(([part, n]) => [h("dt", {}, part), h("dd", {}, String(n))])),
  );
}

const inline = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([part, n]) => `${part} ${n}`)
    .join(", ") || "none";

/** The erasure receipts, newest first, paged by cursor (Newer, Older) as the audit log is. */
function receiptsSection() {
  const results = h("div", { class: "results" });
  let previous: (string | undefined)[] = [];
  let current: string | undefined;
  const load = async (cursor: string | undefined) => {
    if (cursor === undefined) previous = [];
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    const { body } = await call<{ erasures: ErasureReceipt[]; nextCursor: string | null }>("GET", api(`admin/players/erasures?${query}`));
    current = cursor;
    results.replaceChildren(receiptsTable(body.erasures), pager(body.nextCursor));
  };
  const turn = (cursor: string | undefined) => failureIn(results, () => load(cursor));
  const pager = (next: string | null) =>
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", disabled: previous.length === 0, onclick: () => void turn(previous.pop()) }, "Newer"),
      h("button", { type: "button", class: "secondary", disabled: next === null, onclick: () => (previous.push(current), void turn(next!)) }, "Older"),
    );
  return { element: h("section", { "aria-labelledby": "erasures-title" }, h("h2", { id: "erasures-title" }, "Erasure receipts"), results), load };
}

function receiptsTable(erasures: ErasureReceipt[]): HTMLElement {
  if (erasures.length === 0) return h("p", { class: "muted" }, "No player erased yet.");
  return dataTable(
    "erasures",
    "Erasure receipts, newest first",
    ["Receipt", "Player id", "Erased (UTC)", "By", "Rows removed", "Copies scrubbed"],
    erasures.map((r) =>
      h(
        "tr",
        { "data-receipt": r.id },
        h("th", { scope: "row", "data-label": "Receipt" }, h("code", {}, r.id)),
        h("td", { "data-label": "Player id" }, String(r.playerId)),
        h("td", { "data-label": "Erased" }, stamp(r.erasedAt)),
        h("td", { "data-label": "By", class: "nowrap" }, r.erasedBy),
        h("td", { "data-label": "Rows removed" }, inline(r.removed)),
        h("td", { "data-label": "Copies scrubbed" }, inline(r.scrubbed)),
      ),
    ),
  );
}
