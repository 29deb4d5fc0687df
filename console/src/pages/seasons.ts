import { api, call, type Season } from "../api.js";
import { openDialog } from "../dialog.js";
import { dataTable, field, h, onSubmit, refresher, stamp, when } from "../dom.js";

/** A datetime-local input's value, read as UTC (the console shows every time in UTC); empty: undefined. */
function utc(input: HTMLInputElement, name: string): string | undefined {
  const value = input.value.trim();
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) throw new Error(`${name}: expected a date and a time, such as 2027-03-01 00:00`);
  return `${value.length === 16 ? `${value}:00` : value}Z`;
}

const moment = (name: string) => h("input", { name, type: "datetime-local", step: "1" });

/** What a season is now: not begun, running, or ended (its boards final). */
function state(season: Season): "scheduled" | "running" | "ended" {
  if (season.ended) return "ended";
  return Date.parse(season.startsAt) > Date.now() ? "scheduled" : "running";
}

/** Leaderboard seasons: start one (now or later, with an end or not), end one, and the list, newest first. */
export async function seasonsPage(main: HTMLElement): Promise<void> {
  const { body } = await call<{ seasons: Season[] }>("GET", api("admin/seasons"));
  const refresh = refresher(main, seasonsPage);
  main.replaceChildren(
    h("h1", {}, "Seasons"),
    h("div", { class: "notices" }),
    startForm(refresh),
    h("h2", {}, body.seasons.length === 1 ? "1 season" : `${body.seasons.length} seasons`),
    body.seasons.length ? seasonsTable(body.seasons, refresh) : h("p", { class: "muted" }, "No season has been started."),
  );
}

function startForm(refresh: (text?: string) => Promise<void>): HTMLElement {
  const name = h("input", { name: "name", required: true, maxlength: "64", autocomplete: "off", spellcheck: "false", placeholder: "winter-2026" });
  const startsAt = moment("startsAt");
  const endsAt = moment("endsAt");
  const problem = h("div");
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "start-title" },
    h("h2", { id: "start-title" }, "Start a season"),
    h(
      "p",
      { class: "muted" },
      "Its boards rank what each player gains from its start: GET /api/infecte2/get-leaderboard?period=season&season=<name>. A name is used once; times are UTC.",
    ),
    h(
      "div",
      { class: "fields" },
      field("Name", name, "Letters, digits, spaces, . _ -"),
      field("Starts (UTC, optional)", startsAt, "Empty: now; never in the past"),
      field("Ends (UTC, optional)", endsAt, "Empty: until you end it"),
    ),
    problem,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Start season")),
  );
  onSubmit(form, problem, async () => {
    const body = { name: name.value.trim(), startsAt: utc(startsAt, "Starts"), endsAt: utc(endsAt, "Ends") };
    const { body: season } = await call<Season>("POST", api("admin/seasons/start"), body);
    const ends = season.endsAt ? `, ends ${when(season.endsAt)}` : "";
    await refresh(`Started ${season.key}: from ${when(season.startsAt)}${ends}.`);
  });
  return form;
}

function seasonsTable(seasons: Season[], refresh: (text?: string) => Promise<void>): HTMLElement {
  return dataTable(
    "seasons",
    "Leaderboard seasons, newest first",
    ["Season", "Status", "Starts", "Ends", "Counted from", "Actions"],
    seasons.map((s) =>
      h(
        "tr",
        { "data-season": s.key },
        h("th", { scope: "row", "data-label": "Season" }, s.key),
        h("td", { "data-label": "Status" }, h("span", { class: `badge ${state(s)}` }, state(s))),
        h("td", { "data-label": "Starts" }, stamp(s.startsAt)),
        h("td", { "data-label": "Ends" }, s.endsAt ? stamp(s.endsAt) : "when ended"),
        h("td", { "data-label": "Counted from" }, stamp(s.countedFrom)),
        h(
          "td",
          { "data-label": "Actions", class: "row-actions" },
          s.ended ? null : h("button", { type: "button", class: "secondary small", "aria-label": `End ${s.key}`, onclick: () => void end(s, refresh) }, "End…"),
        ),
      ),
    ),
  );
}

async function end(season: Season, refresh: (text?: string) => Promise<void>): Promise<void> {
  const endsAt = moment("endsAt");
  let ended: Season | undefined;
  const ok = await openDialog({
    title: `End ${season.key}?`,
    content: [
      h(
        "p",
        {},
        "Its boards stop counting at the end, and become final; the service then announces the final top of every statistic (season.ended, on the event stream and webhooks). A season ends once.",
      ),
      field("Ends (UTC, optional)", endsAt, season.endsAt ? `Empty: now (it is set to end ${when(season.endsAt)})` : "Empty: now"),
    ],
    confirm: "End season",
    danger: true,
    onConfirm: async () => {
      ended = (await call<Season>("POST", api("admin/seasons/end"), { name: season.key, endsAt: utc(endsAt, "Ends") })).body;
      return true;
    },
  });
  if (ok && ended) await refresh(`${ended.key} ends ${when(ended.endsAt)}.`);
}
