/** A tiny DOM builder: no framework, no inline style or script (the page's CSP forbids both). */
type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | ((event: Event) => void) | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, value);
  }
  for (const child of children) if (child) element.append(child);
  return element;
}

/**
 * A table of rows: a caption for screen readers, a header row of column
 * titles, wrapped so that it scrolls sideways on a narrow screen (on a phone,
 * styles.css shows each row as a card labelled by its cells' data-label).
 */
export function dataTable(className: string, caption: string, titles: readonly string[], rows: readonly HTMLTableRowElement[]): HTMLElement {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: className },
      h("caption", { class: "sr-only" }, caption),
      h("thead", {}, h("tr", {}, ...titles.map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, ...rows),
    ),
  );
}

let ids = 0;
/** A labelled form field: the label names the input for screen readers and clicks. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLElement {
  input.id ||= `f${++ids}`;
  const hintEl = hint ? h("small", { id: `${input.id}-hint` }, hint) : null;
  if (hintEl) input.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input, hintEl);
}

/** Tells assistive technology what just happened (the page's live region). */
export function announce(message: string): void {
  const region = document.getElementById("status")!;
  region.textContent = "";
  window.setTimeout(() => (region.textContent = message), 50);
}

/** An error or notice shown in place, and focused so that keyboard and screen-reader users meet it. */
export function message(kind: "error" | "ok", text: string): HTMLElement {
  return h("p", { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status", tabindex: "-1" }, text);
}

/** What to show of a failure: the service's message (ApiFailure is an Error), or the thrown value. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * A form's submit: runs `action`; what it throws is shown in `problem`, and
 * focused, so that keyboard and screen-reader users meet it.
 */
export function onSubmit(form: HTMLElement, problem: HTMLElement, action: () => Promise<void>): void {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void failureIn(problem, action);
  });
}

/** Runs `action`; what it throws replaces `problem`'s content, focused (a form's submit, a button's action, a page turned). */
export async function failureIn(problem: HTMLElement, action: () => Promise<void>): Promise<void> {
  problem.replaceChildren();
  try {
    await action();
  } catch (error) {
    const shown = message("error", errorText(error));
    problem.replaceChildren(shown);
    shown.focus();
  }
}

/**
 * A page's refresh: renders it again, then shows and announces `text` in its
 * `.notices` element (each page has one, under its title).
 */
export function refresher(main: HTMLElement, render: (main: HTMLElement) => Promise<void>): (text?: string) => Promise<void> {
  const page = location.hash;
  return async (text) => {
    // Left meanwhile (a dialog closed by the browser's Back): the page shown now is another's.
    if (location.hash !== page) return;
    await render(main);
    if (text) {
      main.querySelector(".notices")!.replaceChildren(message("ok", text));
      announce(text);
    }
  };
}

/**
 * Every timestamp of the console in one format, in UTC, to the second (2026-11-25 04:06:12 UTC), or to the
 * minute for a time kept only to the minute (a key's last use: 2026-11-25 17:50 UTC).
 */
export function when(value: string | null, to: "second" | "minute" = "second"): string {
  if (!value) return "—";
  const at = new Date(value);
  return Number.isNaN(at.getTime())
    ? value
    : `${at
        .toISOString()
        .slice(0, to === "minute" ? 16 : 19)
        .replace("T", " ")} UTC`;
}

/** A timestamp in a table cell: it may go on two lines between the date and the time, never inside either. */
export function stamp(value: string | null, to: "second" | "minute" = "second"): HTMLElement {
  const text = when(value, to);
  const space = text.indexOf(" ");
  if (space < 0) return h("span", { class: "stamp" }, text);
  return h("span", { class: "stamp" }, h("span", { class: "nowrap" }, text.slice(0, space)), " ", h("span", { class: "nowrap" }, text.slice(space + 1)));
}
