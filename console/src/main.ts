import { ApiFailure, api, call, session } from "./api.js";
import { announce, errorText, field, h, message } from "./dom.js";
import { PAGES } from "./nav.js";

interface Session {
  username: string;
  role: string;
  groups: string[];
}

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
const who = document.getElementById("who")!;

/** Why a key cannot sign in, in words an admin can act on. */
export function signInRefusal(error: unknown): string {
  if (error instanceof ApiFailure && error.status === 401) return "This key is not valid: it is unknown, revoked, or was rotated away.";
  if (error instanceof ApiFailure && error.status === 403) {
    return "This key works, but its API user is not in caller group A or B: the admin console is for groups A and B only.";
  }
  if (error instanceof ApiFailure && error.status === 429) return "Too many attempts from this address: wait a minute and try again.";
  return errorText(error);
}

function signInForm(notice?: string): void {
  nav.hidden = true;
  who.replaceChildren();
  const key = h("input", { type: "password", name: "apiKey", autocomplete: "off", required: true, spellcheck: "false", placeholder: "gsk_…" });
  const problem = h("div");
  const form = h(
    "form",
    { class: "card narrow", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in"),
    h("p", {}, "Use the API key of a user in caller group A or B. It is kept in this tab only, until you sign out or close it."),
    field("API key", key),
    problem,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.replaceChildren();
    try {
      const { body } = await call<Session>("GET", api("admin/session"), undefined, key.value.trim());
      session.set(key.value.trim());
      signedIn(body);
    } catch (error) {
      const shown = message("error", signInRefusal(error));
      problem.replaceChildren(shown);
      key.focus();
    }
  });
  main.replaceChildren(...(notice ? [message("ok", notice)] : []), form);
  key.focus();
}

function signedIn(me: Session): void {
  session.signedInAs(me.username);
  nav.hidden = false;
  nav.replaceChildren(h("ul", {}, ...PAGES.map((p) => h("li", {}, h("a", { href: `#${p.id}`, "data-page": p.id }, p.title)))));
  const signOut = h(
    "button",
    { type: "button", class: "secondary small", onclick: () => (session.clear(), (location.hash = ""), signInForm("Signed out.")) },
    "Sign out",
  );
  who.replaceChildren(h("span", {}, `${me.username} (group ${me.groups.join(", ")})`), signOut);
  if (!PAGES.some((p) => `#${p.id}` === location.hash)) location.hash = `#${PAGES[0]!.id}`;
  else void show();
}

async function show(): Promise<void> {
  if (!session.key()) return;
  const page = PAGES.find((p) => `#${p.id}` === location.hash) ?? PAGES[0]!;
  for (const link of nav.querySelectorAll("a")) {
    if (link.dataset.page === page.id) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${page.title} · Admin console`;
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    await page.render(main);
  } catch (error) {
    if (error instanceof ApiFailure && (error.status === 401 || error.status === 403)) {
      session.clear();
      signInForm(signInRefusal(error));
      return;
    }
    main.replaceChildren(message("error", errorText(error)));
  }
  main.focus();
  announce(`${page.title} page`);
}

window.addEventListener("hashchange", () => void show());

async function start(): Promise<void> {
  const key = session.key();
  if (!key) return signInForm();
  try {
    signedIn((await call<Session>("GET", api("admin/session"))).body);
  } catch (error) {
    session.clear();
    signInForm(signInRefusal(error));
  }
}
void start();
