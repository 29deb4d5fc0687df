import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Browser, type Locator, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/core/config.js";
import { createLogger } from "../src/core/logger.js";
import { DeliveryWorker } from "../src/webhooks/worker.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { BROWSER_HOST, chromiumAvailable, launchChromium } from "./helpers/browser.js";
import { makeCosmetic, makePlayer, unique } from "./helpers/fixtures.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * The admin console as an admin uses it: Debian's Chromium, headless, driven
 * by playwright-core against the live service (helpers/browser.ts). Screenshots
 * go to test-output/.
 */
const available = chromiumAvailable("console-browser");
const HOST = BROWSER_HOST;
const OUTPUT = path.resolve("test-output");
const shot = (name: string) => path.join(OUTPUT, `console-${name}.png`);
/** The README's picture of the console, retaken by this run when SCREENSHOT_DOCS=1 (then checked in). */
const DOCS_SHOT = path.resolve("docs/admin-console.png");

/** Layout facts of the users table a reader would notice: cells shorter than their row, buttons or dates wrapped. */
const USERS_LAYOUT = `(() => [...document.querySelectorAll("table.users tbody tr")].map((tr) => {
  const cell = tr.querySelector("td.row-actions");
  const tops = [...cell.querySelectorAll("button")].map((b) => Math.round(b.getBoundingClientRect().top));
  const until = [...tr.querySelectorAll(".pending .nowrap")];
  const name = tr.querySelector(".who-cell .nowrap");
  return {
    user: tr.dataset.user,
    cellShort: Math.round(tr.getBoundingClientRect().height - cell.getBoundingClientRect().height),
    buttonRows: new Set(tops).size,
    untilLines: Math.max(1, ...until.map((part) => part.getClientRects().length)),
    overflow: tr.closest(".table-wrap").scrollWidth - tr.closest(".table-wrap").clientWidth,
    nameLines: name.getClientRects().length,
  };
}))()`;

/** Per audit row: the right edge of its changes (and of what is in them), its card's, and the width its cells hide. */
const CHANGES_LAYOUT = `(() => [...document.querySelectorAll("table.audit tbody tr")].map((tr) => {
  const changes = tr.querySelector("dl.changes");
  const parts = changes ? [changes, ...changes.querySelectorAll("dt, dd, span")] : [];
  return {
    right: Math.max(0, ...parts.map((part) => Math.round(part.getBoundingClientRect().right))),
    cardRight: Math.round(tr.getBoundingClientRect().right),
    hidden: [...tr.querySelectorAll("td")].reduce((sum, td) => sum + Math.max(0, td.scrollWidth - td.clientWidth), 0),
  };
}))()`;

describe.runIf(available)("the admin console in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let adminKey: string;
  let groupCKey: string;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  const outside: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    // The bundle the service serves (npm start and the Dockerfile build it; a test run may not have).
    const built = spawnSync(process.execPath, ["scripts/build-console.mjs", "--if-stale"], { encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    // Webhooks to a receiver on 127.0.0.1: private targets allowed, as on a test machine.
    const env = { CALLERS_USER_A: "user-A", CALLERS_USER_B: "admin-b", CALLERS_USER_C: "user-C,game-plugin", WEBHOOKS_ALLOW_PRIVATE: "true" };
    t = await startTestApp({ env });
    receiver = await startReceiver();
    worker = new DeliveryWorker(t.database.db, loadConfig({ NODE_ENV: "test", ...env }), createLogger("silent"));
    void worker.start();
    adminKey = await t.key("admin-b");
    groupCKey = await t.key("user-C");
    origin = t.url.replace("127.0.0.1", HOST);
    mkdirSync(OUTPUT, { recursive: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("request", (req) => {
      if (!req.url().startsWith(origin)) outside.push(req.url());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    // A CSP violation (inline script or style) is reported on the console; the refused sign-in's 403 too, as a failed load.
    page.on("console", (msg) => {
      if (msg.type() === "error" && !/403 \(Forbidden\)/.test(msg.text())) problems.push(msg.text());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    await t?.close();
  });

  /** The changes an audit row shows: per field, the value before (when shown) and after, and whether marked unchanged. */
  async function changesOf(row: Locator): Promise<Record<string, { before?: string; after: string; unchanged?: true }>> {
    const names = await row.locator("dl.changes dt").allTextContents();
    const shown: Record<string, { before?: string; after: string; unchanged?: true }> = {};
    for (const [i, name] of names.entries()) {
      const dd = row.locator("dl.changes dd").nth(i);
      const before = dd.locator(".before");
      shown[name] = {
        ...((await before.count()) > 0 ? { before: (await before.textContent())! } : {}),
        after: (await dd.locator(".after").textContent())!,
        ...((await dd.getByText("unchanged").count()) > 0 ? { unchanged: true as const } : {}),
      };
    }
    return shown;
  }

  const players = (key: string) => fetch(`${t.url}/api/player/get-all-players`, { headers: { "X-API-Key": key } }).then((r) => r.status);

  /** Reads the key a dialog shows once, copies it with the button, and closes the dialog. */
  async function takeShownKey(): Promise<string> {
    const dialog = page.getByRole("dialog");
    const key = await dialog.getByLabel("New API key").inputValue();
    await dialog.getByRole("button", { name: "Copy key" }).click();
    await expect(dialog.getByText("Copied.").isVisible()).resolves.toBe(true);
    await dialog.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    return key;
  }

  it("when a group-C key signs in, then it is refused with a clear message, and nothing of the console shows", async () => {
    await page.goto(`${origin}/admin`);
    await page.getByLabel("API key").fill(groupCKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await expect(alert.textContent()).resolves.toContain("not in caller group A or B");
    expect(await page.locator("#nav").isHidden()).toBe(true);
    await page.screenshot({ path: shot("sign-in-refused") });
  }, 30_000);

  it("when an admin signs in, creates a user, rotates its key with grace and revokes it, then the keys work and stop as shown", async () => {
    await page.getByLabel("API key").fill(adminKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "API users" }).waitFor();
    // The key is in this tab's memory only: not in the address, not in a cookie.
    expect(page.url()).not.toContain(adminKey);
    expect(await page.context().cookies()).toEqual([]);
    // Its own row says so, and offers no Revoke (the service refuses it: the console would lock itself out).
    const own = page.locator('tr[data-user="admin-b"]');
    await expect(own.locator("th small").textContent()).resolves.toContain("you");
    expect(await own.getByRole("button", { name: "Revoke admin-b" }).count()).toBe(0);

    await page.getByLabel("Username").fill("game-plugin");
    await page.getByRole("button", { name: "Create user" }).click();
    const first = await takeShownKey();
    expect(first).toMatch(/^gsk_[A-Za-z0-9_-]{43}$/);
    expect(await players(first)).toBe(200);
    const row = page.locator('tr[data-user="game-plugin"]');
    await row.waitFor();

    // A refused change is shown in its dialog, which stays open for another try.
    const problemsBefore = problems.length;
    await page.getByRole("button", { name: "Allowed addresses of game-plugin" }).click();
    await page.getByRole("dialog").getByRole("textbox").fill("not-an-ip");
    await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("dialog").getByRole("alert").textContent()).resolves.toMatch(/^allowedAddresses: .*not-an-ip/);
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await players(first)).toBe(200);
    // The browser logs the 400 it was answered; nothing else went wrong.
    expect(problems.splice(problemsBefore)).toEqual(["Failed to load resource: the server responded with a status of 400 (Bad Request)"]);

    await page.getByRole("button", { name: "Rotate the key of game-plugin" }).click();
    await expect(page.getByLabel("Old key keeps working for").inputValue()).resolves.toBe("86400");
    await page.getByRole("button", { name: "Rotate key" }).click();
    await page.getByRole("dialog", { name: "New key of game-plugin" }).waitFor();
    await expect(page.getByRole("dialog").textContent()).resolves.toMatch(new RegExp(`previous key \\(${first.slice(0, 8)}…\\) works until`));
    const second = await takeShownKey();
    expect(second).not.toBe(first);
    expect([await players(first), await players(second)]).toEqual([200, 200]);
    // The list is fetched again after the dialog closes: the row then shows the old key's expiry.
    await row.locator(".pending", { hasText: "works until" }).waitFor();
    await page.screenshot({ path: shot("users"), fullPage: true });
    if (process.env.SCREENSHOT_DOCS) await page.screenshot({ path: DOCS_SHOT, fullPage: true });
    // Row lines straight (each Actions cell as tall as its row), Rotate/Addresses/Revoke on one line, the
    // hyphenated name and "works until <date>" unbroken.
    for (const facts of await page.evaluate<{ user: string }[]>(USERS_LAYOUT)) {
      expect(facts).toEqual({ user: facts.user, cellShort: 0, buttonRows: 1, untilLines: 1, nameLines: 1, overflow: 0 });
    }
    expect(await page.locator('tr[data-user="admin-b"] button', { hasText: "Revoke" }).count()).toBe(0);
    const icon = await fetch(`${t.url}${new URL(await page.evaluate<string>("document.querySelector('link[rel=icon]').href")).pathname}`);
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);

    await page.getByRole("button", { name: "Revoke game-plugin" }).click();
    await expect(page.getByRole("dialog").textContent()).resolves.toContain("stops working at once");
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("status").filter({ hasText: "Revoked game-plugin." }).first().waitFor();
    await expect(row.getByText("revoked").isVisible()).resolves.toBe(true);
    expect([await players(first), await players(second)]).toEqual([401, 401]);
  }, 60_000);

  it("when the audit log is filtered by actor and action, then only those entries show", async () => {
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    await page.getByLabel("Actor").fill("admin-b");
    await page.getByLabel("Action").selectOption("api_user.rotate");
    // Dates in UTC as ISO 8601, as the table shows them, not the browser's local format.
    await page.getByLabel("From (UTC)").fill("25/11/2026");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("From: expected an ISO 8601 date in UTC").waitFor();
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel("From (UTC)").fill(today);
    await page.getByLabel("Until (UTC)").fill(`${today}T23:59:59Z`);
    await page.getByRole("button", { name: "Filter" }).click();
    // The unfiltered page was there first: wait for the filtered one.
    await expect.poll(() => page.locator("table.audit tbody tr").count(), { timeout: 10_000 }).toBe(1);
    await expect(page.locator("table.audit tbody tr").first().textContent()).resolves.toContain("api_user:game-plugin");
    // The changes read as field, before → after, dates in the one format of the console, not raw JSON.
    const moment = expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    await expect(changesOf(page.locator("table.audit tbody tr").first())).resolves.toEqual({
      key: { after: "replaced" },
      rotatedAt: { before: "none", after: moment },
      revokedAt: { after: "none", unchanged: true },
      previousKeyExpiresAt: { before: "none", after: moment },
    });
    await expect(page.locator("table.audit tbody tr").first().locator("td").first().textContent()).resolves.toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/,
    );

    // An update through the API: each field it sent, with the value it replaced.
    const cosmetic = await makeCosmetic(t.database.db.prisma, { price: 250, collection: "Summer sale" });
    const update = await fetch(`${t.url}/api/cosmetic/update-cosmetic`, {
      method: "PATCH",
      headers: { "X-API-Key": adminKey, "Content-Type": "application/json" },
      body: JSON.stringify({ id: cosmetic.id, price: 450, collection: null }),
    });
    expect(update.status).toBe(200);
    await page.getByLabel("Action").selectOption("");
    await page.getByRole("button", { name: "Filter" }).click();
    const updated = page.locator("table.audit tbody tr", { hasText: `cosmetic:${cosmetic.id}` });
    await updated.waitFor();
    await expect(changesOf(updated)).resolves.toEqual({ price: { before: "250", after: "450" }, collection: { before: "Summer sale", after: "none" } });
    // Entries without before (a creation) show the values written alone.
    await expect(changesOf(page.locator("table.audit tbody tr", { hasText: "api_user.register" }).first())).resolves.toEqual({
      username: { after: "game-plugin" },
      role: { after: "USER" },
    });
    await page.screenshot({ path: shot("audit"), fullPage: true });
    // On a phone, the entry is a card; before → after still reads, without sideways scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    // Every row's changes end inside its card, none cut at the screen's right edge.
    for (const facts of await page.evaluate<{ right: number; cardRight: number; hidden: number }[]>(CHANGES_LAYOUT)) {
      expect(facts.right).toBeLessThanOrEqual(facts.cardRight);
      expect(facts.hidden).toBe(0);
    }
    await updated.scrollIntoViewIfNeeded();
    await page.screenshot({ path: shot("audit-phone"), fullPage: false });
    await page.setViewportSize({ width: 1280, height: 860 });
  }, 30_000);

  it("when an admin adds a webhook endpoint, then its secret shows once, a write's delivery arrives signed and is listed, and redeliver sends it again", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();
    await page.getByLabel("Receiver URL").fill(receiver.url);
    await page.getByLabel("Events (optional)").fill("reward_log.created");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const dialog = page.getByRole("dialog");
    const secret = await dialog.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await dialog.getByRole("button", { name: "Copy secret" }).click();
    await expect(dialog.getByText("Copied.").isVisible()).resolves.toBe(true);
    await dialog.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    const row = page.locator("table.webhooks tbody tr").first();
    await expect(row.textContent()).resolves.toContain(receiver.url);
    // Shown once: the page holds it no more.
    expect(await page.content()).not.toContain(secret);

    const player = await makePlayer(t.database.db.prisma);
    const write = await fetch(`${t.url}/api/website/create-reward-log`, {
      method: "POST",
      headers: { "X-API-Key": adminKey, "Content-Type": "application/json" },
      body: JSON.stringify({ playerId: player.id, rewardId: 77 }),
    });
    expect(write.status).toBe(201);
    await receiver.waitFor("the reward", () => receiver.delivered().size === 1);
    const [sent] = receiver.received;
    expect((new Webhook(secret).verify(sent!.body, sent!.headers as Record<string, string>) as { type: string }).type).toBe("reward_log.created");

    // The delivery is listed once it is delivered (the list is read again on request).
    const delivered = page.locator("table.deliveries tbody tr", { hasText: "delivered" });
    await expect.poll(async () => (await page.getByRole("button", { name: "Show deliveries" }).click(), delivered.count()), { timeout: 10_000 }).toBe(1);
    await expect(delivered.textContent()).resolves.toContain(String(sent!.headers["webhook-id"]));
    await page.screenshot({ path: shot("webhooks"), fullPage: true });
    const id = await delivered.getAttribute("data-delivery");
    await page.getByRole("button", { name: `Redeliver delivery ${id}` }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Delivery ${id} will be sent again now.` })
      .first()
      .waitFor();
    await receiver.waitFor("the redelivery", () => receiver.received.length === 2);
    expect(receiver.received[1]!.headers["webhook-id"]).toBe(sent!.headers["webhook-id"]);
  }, 60_000);

  it("when the health page opens, and the console is seen on a phone, then it is ready, and usable at 390 px", async () => {
    await page.getByRole("link", { name: "Health" }).click();
    await expect(page.locator("table.health").textContent()).resolves.toContain("status: ready");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "API users" }).click();
    await page.locator('tr[data-user="game-plugin"]').waitFor();
    // No sideways scrolling of the page: the table's rows become cards.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    // The card's role line sits under the name, not under the "User" label.
    const [name, role] = await Promise.all(
      [".who-cell .nowrap", ".who-cell small"].map((css) => page.locator(`tr[data-user="game-plugin"] ${css}`).boundingBox()),
    );
    expect(role!.x).toBe(name!.x);
    expect(role!.y).toBeGreaterThan(name!.y);
    await page.screenshot({ path: shot("phone"), fullPage: false });
    // The browser's Back while a dialog is open: the dialog closes with its page, not left over the one before.
    await page.getByRole("button", { name: "Rotate the key of game-plugin" }).click();
    await page.getByRole("dialog").waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Health" }).waitFor();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await expect(page.locator("table.health").textContent()).resolves.toContain("status: ready");
    await page.goForward();
    // "Last used" is kept to the minute: shown so, without seconds the service does not know.
    await t.database.db.prisma.apiUser.update({ where: { username: "user-C" }, data: { keyLastUsedAt: new Date("2026-11-25T17:50:00Z") } });
    await page.reload();
    await expect(page.locator('tr[data-user="user-C"] td[data-label="Last used"]').textContent()).resolves.toBe("2026-11-25 17:50 UTC");
    // Keyboard: a page, once shown, has the focus (screen readers hear its name), and Tab goes on to its first field.
    // (A reload also shows that the sign-in lasts for the tab: the key is in its sessionStorage.)
    await page.reload();
    await page.locator('tr[data-user="game-plugin"]').waitFor();
    await expect(page.evaluate("document.activeElement.id")).resolves.toBe("main");
    await page.keyboard.press("Tab");
    await expect(page.evaluate("document.activeElement.name")).resolves.toBe("username");
    // The skip link, first on the page, leads past the navigation.
    await page.focus("a.skip");
    await page.keyboard.press("Enter");
    await expect(page.evaluate("document.activeElement.id")).resolves.toBe("main");
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  }, 30_000);

  it("when an admin exports a player by pseudo, then erases them after typing it, then the file, the receipt and the list say so; unknown and erased players are told", async () => {
    const prisma = t.database.db.prisma;
    const steve = await makePlayer(prisma, { pseudo: unique("Steve") });
    await prisma.rewardLog.create({ data: { playerId: steve.id, rewardId: 5 } });
    const before = problems.length;
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.getByRole("link", { name: "Players" }).click();
    await page.getByRole("heading", { name: "Players" }).waitFor();
    const finder = page.locator("form", { has: page.getByRole("heading", { name: "Find a player" }) });

    // The export: a file named by the player's id, whose manifest names them; its counts on the page.
    await page.getByLabel("Pseudo", { exact: true }).fill(steve.pseudo.toLowerCase());
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export" }).click()]);
    expect(download.suggestedFilename()).toBe(`player-${steve.id}-export.json`);
    const file = JSON.parse(readFileSync(await download.path(), "utf8")) as { manifest: { player: object; counts: Record<string, number> } };
    expect(file.manifest.player).toEqual({ id: steve.id, pseudo: steve.pseudo });
    expect(file.manifest.counts).toMatchObject({ player: 1, rewardLogs: 1, worlds: 0 });
    const counts = page.locator("section.export dl.counts");
    const [parts, rows] = await Promise.all([counts.locator("dt").allTextContents(), counts.locator("dd").allTextContents()]);
    expect(Object.fromEntries(parts.map((part, i) => [part, Number(rows[i])]))).toEqual(file.manifest.counts);

    // The erasure: refused until the pseudo is typed as given, then the receipt; the player is gone.
    await page.getByRole("button", { name: "Erase…" }).click();
    const dialog = page.getByRole("dialog", { name: `Erase ${steve.pseudo.toLowerCase()}?` });
    await expect(dialog.textContent()).resolves.toContain("irreversible");
    await dialog.getByRole("textbox").fill("someone else");
    await dialog.getByRole("button", { name: "Erase for ever" }).click();
    await dialog.getByRole("alert").filter({ hasText: "nothing was erased" }).waitFor();
    expect(await prisma.player.count({ where: { id: steve.id } })).toBe(1);
    await dialog.getByLabel(`Type ${steve.pseudo.toLowerCase()} to confirm`).fill(steve.pseudo.toLowerCase());
    await dialog.getByRole("button", { name: "Erase for ever" }).click();
    await dialog.waitFor({ state: "detached" });
    const receipt = page.locator("section.receipt");
    const receiptId = (await receipt.getByRole("heading", { level: 2 }).textContent())!.replace("Receipt ", "");
    expect(receiptId).toMatch(/^era_[0-9a-f]{32}$/);
    await page
      .getByRole("status")
      .filter({ hasText: `Erased player ${steve.id} (receipt ${receiptId}).` })
      .first()
      .waitFor();
    await expect(receipt.textContent()).resolves.toMatch(new RegExp(`Player id${steve.id}Erased\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTCByadmin-b`));
    await expect(receipt.locator("dl.counts").nth(1).textContent()).resolves.toContain("rewardLogs1");
    const lookup = await fetch(`${t.url}/api/player/get-player-by-nick?nick=${steve.pseudo}`, { headers: { "X-API-Key": adminKey } });
    expect([lookup.status, ((await lookup.json()) as { message: string }).message]).toEqual([404, "Player not found"]);
    // The receipts list, newest first, has it at the top.
    const first = page.locator("table.erasures tbody tr").first();
    await expect(first.getAttribute("data-receipt")).resolves.toBe(receiptId);
    await expect(first.locator('td[data-label="Player id"]').textContent()).resolves.toBe(String(steve.id));
    await page.screenshot({ path: shot("players"), fullPage: true });

    // An unknown pseudo: the service's 404 message, in place.
    await page.getByLabel("Pseudo", { exact: true }).fill(unique("nobody"));
    await page.getByRole("button", { name: "Export" }).click();
    await finder.getByRole("alert").filter({ hasText: "Player not found" }).waitFor();
    await expect(page.locator("section.export").count()).resolves.toBe(0);
    // Erased before, by id: the 410 names the receipt, in the dialog, which stays open.
    await page.getByLabel("Pseudo", { exact: true }).fill("");
    await page.getByLabel("Id", { exact: true }).fill(String(steve.id));
    await page.getByRole("button", { name: "Erase…" }).click();
    await page.getByRole("dialog").getByRole("textbox").fill(String(steve.id));
    await page.getByRole("dialog").getByRole("button", { name: "Erase for ever" }).click();
    await page.getByRole("dialog").getByRole("alert").filter({ hasText: receiptId }).waitFor();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    // On a phone, the receipts are cards, without sideways scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 860 });
    const failed = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
    expect(problems.splice(before)).toEqual([failed("404 (Not Found)"), failed("410 (Gone)")]);
    expect(outside).toEqual([]);
  }, 60_000);

  it("when an admin starts a season, then sets its end, the list says so; an end before the start and a name used twice are refused in place", async () => {
    const prisma = t.database.db.prisma;
    const past = unique("autumn-");
    await prisma.leaderboardPeriod.create({
      data: {
        kind: "season",
        key: past,
        startsAt: new Date("2026-09-01T00:00:00Z"),
        endsAt: new Date("2026-11-01T00:00:00Z"),
        countedFrom: new Date("2026-09-01T00:00:00Z"),
        createdBy: "test",
      },
    });
    const before = problems.length;
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.getByRole("link", { name: "Seasons" }).click();
    await page.getByRole("heading", { name: "Seasons", level: 1 }).waitFor();
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Start a season" }) });
    const name = unique("winter-");

    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Ends (UTC, optional)").fill("2020-01-01T00:00");
    await page.getByRole("button", { name: "Start season" }).click();
    await form.getByRole("alert").filter({ hasText: "endsAt: not after startsAt" }).waitFor();
    expect(await prisma.leaderboardPeriod.count({ where: { key: name } })).toBe(0);

    await page.getByLabel("Ends (UTC, optional)").fill("");
    await page.getByRole("button", { name: "Start season" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Started ${name}: from ` })
      .first()
      .waitFor();
    const row = page.locator(`table.seasons tbody tr[data-season="${name}"]`);
    await expect(row.locator(".badge").textContent()).resolves.toBe("running");
    await expect(row.locator('td[data-label="Ends"]').textContent()).resolves.toBe("when ended");
    const ended = page.locator(`table.seasons tbody tr[data-season="${past}"]`);
    await expect(ended.locator(".badge").textContent()).resolves.toBe("ended");
    await expect(ended.getByRole("button").count()).resolves.toBe(0);

    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByRole("button", { name: "Start season" }).click();
    await form
      .getByRole("alert")
      .filter({ hasText: `Season '${name}' already exists` })
      .waitFor();

    await row.getByRole("button", { name: `End ${name}` }).click();
    const dialog = page.getByRole("dialog", { name: `End ${name}?` });
    await dialog.getByLabel("Ends (UTC, optional)").fill("2099-01-01T00:00");
    await dialog.getByRole("button", { name: "End season" }).click();
    await dialog.waitFor({ state: "detached" });
    await page
      .getByRole("status")
      .filter({ hasText: `${name} ends 2099-01-01 00:00:00 UTC.` })
      .first()
      .waitFor();
    await expect(row.locator('td[data-label="Ends"]').textContent()).resolves.toBe("2099-01-01 00:00:00 UTC");
    const audit = await prisma.auditLog.findMany({ where: { target: `season:${name}` }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.action, a.actor])).toEqual([
      ["season.start", "admin-b"],
      ["season.end", "admin-b"],
    ]);
    await page.screenshot({ path: shot("seasons"), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 860 });
    const failed = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
    expect(problems.splice(before)).toEqual([failed("400 (Bad Request)"), failed("409 (Conflict)")]);
    expect(outside).toEqual([]);
  }, 60_000);
});
