import { type ApiUser, api, call, session } from "../api.js";
import { openDialog, secretBox } from "../dialog.js";
import { dataTable, field, h, onSubmit, refresher, stamp, when } from "../dom.js";

const GRACE_CHOICES: [string, number][] = [
  ["24 hours (default)", 86_400],
  ["1 hour", 3_600],
  ["7 days", 604_800],
  ["None: the old key stops at once", 0],
];

/** API users: create (key shown once), rotate with a grace period, revoke, allowed addresses. */
export async function usersPage(main: HTMLElement): Promise<void> {
  const { body } = await call<{ users: ApiUser[] }>("GET", api("admin/users"));
  const notice = h("div", { class: "notices" });
  const refresh = refresher(main, usersPage);
  main.replaceChildren(h("h1", {}, "API users"), notice, createForm(refresh), h("h2", {}, `${body.users.length} users`), usersTable(body.users, refresh));
}

function createForm(refresh: (text?: string) => Promise<void>): HTMLElement {
  const username = h("input", { name: "username", required: true, minlength: "3", maxlength: "32", pattern: "[A-Za-z0-9_.\\-]+", autocomplete: "off" });
  const role = h("input", { name: "role", maxlength: "32", pattern: "[A-Z_]+", placeholder: "USER", autocomplete: "off" });
  const problem = h("div");
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, "Create an API user"),
    h(
      "div",
      { class: "fields" },
      field("Username", username, "3 to 32 letters, digits, _ - ."),
      field("Role (optional)", role, "Capitals and _; grants nothing by itself"),
    ),
    problem,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create user")),
  );
  onSubmit(form, problem, async () => {
    const body: Record<string, string> = { username: username.value.trim() };
    if (role.value.trim()) body.role = role.value.trim();
    const { body: created } = await call<{ username: string; apiKey: string }>("POST", api("inscription"), body);
    await openDialog({
      title: `Key of ${created.username}`,
      content: [
        h("p", {}, "This key is shown only now: only its hash is stored. Copy it to where the client will use it."),
        h("p", {}, "The user can call routes once an operator adds it to a caller group (CALLERS_USER_A..D)."),
        secretBox("New API key", created.apiKey),
      ],
      cancel: "",
      confirm: "I have copied it",
    });
    await refresh(`Created ${created.username}.`);
  });
  return form;
}

function usersTable(users: ApiUser[], refresh: (text?: string) => Promise<void>): HTMLElement {
  const head = ["User", "Groups", "Status", "Key", "Last used", "Previous key", "Allowed addresses", "Created", "Actions"];
  return dataTable(
    "users",
    "API users and their keys",
    head,
    users.map((u) => {
      // The service refuses to revoke the key the console signed in with: no button for it.
      const self = u.username.toLowerCase() === session.username()?.toLowerCase();
      return h(
        "tr",
        { "data-user": u.username },
        // Name and role in one block: on a phone's card the role line goes under the name, not under the label.
        h(
          "th",
          { scope: "row", "data-label": "User" },
          h("span", { class: "who-cell" }, h("span", { class: "nowrap" }, u.username), h("small", {}, self ? `${u.role} · you` : u.role)),
        ),
        h("td", { "data-label": "Groups" }, u.groups.join(", ") || "none"),
        h("td", { "data-label": "Status" }, h("span", { class: `badge ${u.status}` }, u.status)),
        h("td", { "data-label": "Key" }, h("code", {}, `${u.keyHint}…`)),
        h("td", { "data-label": "Last used" }, stamp(u.keyLastUsedAt, "minute")),
        h(
          "td",
          { "data-label": "Previous key", class: "pending" },
          u.pendingRotation ? h("span", {}, h("code", {}, `${u.pendingRotation.keyHint}…`), " works until ", stamp(u.pendingRotation.expiresAt)) : "—",
        ),
        h("td", { "data-label": "Allowed addresses" }, u.allowedAddresses ? u.allowedAddresses.join(", ") : "anywhere"),
        h("td", { "data-label": "Created" }, stamp(u.createdAt)),
        h(
          "td",
          { "data-label": "Actions", class: "row-actions" },
          h(
            "button",
            { type: "button", class: "secondary small", "aria-label": `Rotate the key of ${u.username}`, onclick: () => void rotate(u, refresh) },
            "Rotate",
          ),
          h(
            "button",
            { type: "button", class: "secondary small", "aria-label": `Allowed addresses of ${u.username}`, onclick: () => void addresses(u, refresh) },
            "Addresses",
          ),
          u.status === "active" && !self
            ? h("button", { type: "button", class: "danger small", "aria-label": `Revoke ${u.username}`, onclick: () => void revoke(u, refresh) }, "Revoke")
            : null,
        ),
      );
    }),
  );
}

async function rotate(user: ApiUser, refresh: (text?: string) => Promise<void>): Promise<void> {
  const grace = h("select", { name: "grace" }, ...GRACE_CHOICES.map(([label, seconds]) => h("option", { value: String(seconds) }, label)));
  let issued: { apiKey: string; user: ApiUser } | undefined;
  const ok = await openDialog({
    title: `Rotate the key of ${user.username}`,
    content: [
      h("p", {}, "A new key is issued and shown once. The current key keeps working for the grace period, so that its holder can switch without downtime."),
      field("Old key keeps working for", grace),
    ],
    confirm: "Rotate key",
    onConfirm: async () => {
      issued = (
        await call<{ apiKey: string; user: ApiUser }>("POST", api("admin/users/rotate-key"), { username: user.username, graceSeconds: Number(grace.value) })
      ).body;
      return true;
    },
  });
  if (!ok || !issued) return;
  const until = issued.user.pendingRotation;
  await openDialog({
    title: `New key of ${user.username}`,
    content: [
      h("p", {}, until ? `The previous key (${until.keyHint}…) works until ${when(until.expiresAt)}.` : "The previous key no longer works."),
      h("p", {}, "This key is shown only now."),
      secretBox("New API key", issued.apiKey),
    ],
    cancel: "",
    confirm: "I have copied it",
  });
  await refresh(`Rotated the key of ${user.username}.`);
}

async function revoke(user: ApiUser, refresh: (text?: string) => Promise<void>): Promise<void> {
  const ok = await openDialog({
    title: `Revoke ${user.username}?`,
    content: [
      h(
        "p",
        {},
        `Every key of ${user.username}${user.pendingRotation ? ", the previous one in its grace period too," : ""} stops working at once, on every instance. Rotating its key later reinstates it.`,
      ),
    ],
    confirm: "Revoke",
    danger: true,
    onConfirm: async () => {
      await call("POST", api("admin/users/revoke"), { username: user.username });
      return true;
    },
  });
  if (ok) await refresh(`Revoked ${user.username}.`);
}

async function addresses(user: ApiUser, refresh: (text?: string) => Promise<void>): Promise<void> {
  const list = h("input", {
    name: "addresses",
    value: user.allowedAddresses?.join(", ") ?? "",
    autocomplete: "off",
    placeholder: "203.0.113.0/24, 2001:db8::/32",
  });
  const ok = await openDialog({
    title: `Where ${user.username}'s keys may be used from`,
    content: [field("Addresses or CIDR blocks, comma-separated", list, "Empty: from anywhere")],
    confirm: "Save",
    onConfirm: async () => {
      const entries = list.value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      await call("PATCH", api("admin/users/allowed-addresses"), { username: user.username, allowedAddresses: entries.length ? entries : null });
      return true;
    },
  });
  if (ok) await refresh(`Saved the allowed addresses of ${user.username}.`);
}
