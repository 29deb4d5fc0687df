import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { BROWSER_HOST, chromiumAvailable, launchChromium } from "./helpers/browser.js";

/**
 * The docs page as a person sees it, in Debian's Chromium (helpers/browser.ts).
 */
const available = chromiumAvailable("docs-browser");
const HOST = BROWSER_HOST;
export const SCREENSHOT = path.resolve("test-output", "docs-page.png");

describe.runIf(available)("the docs page in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("when opened from a host other than localhost over plain HTTP, then it shows every operation (the twelve of the spec, the event stream and the admin routes), loads nothing from outside, and a screenshot is saved", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    const outside: string[] = [];
    const pageErrors: string[] = [];
    const origin = t.url.replace("127.0.0.1", HOST);
    page.on("request", (req) => {
      if (!req.url().startsWith(origin)) outside.push(req.url());
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${origin}/api/docs`);
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    const operations = (await page.locator(".opblock .opblock-summary-path").allTextContents()).map((text) =>
      text.replace(/\u200b/g, "").trim(),
    );
    expect(operations.sort()).toEqual(
      [
        "/admin/audit", "/admin/session", "/admin/users", "/admin/users/allowed-addresses", "/admin/users/revoke", "/admin/users/rotate-key",
        "/admin/webhooks", "/admin/webhooks/add", "/admin/webhooks/deliveries", "/admin/webhooks/redeliver", "/admin/webhooks/remove",
        "/cosmetic/get-cosmetic", "/cosmetic/update-cosmetic", "/events", "/form/create-form", "/freebuild/update-world",
        "/infecte2/get-all-infectes", "/inscription", "/parkour/get-all-maps", "/player/get-all-full-players-by-gradeId",
        "/player/get-all-players", "/player/get-player-by-nick", "/temporary-item/get-active-items", "/website/create-reward-log",
      ].sort(),
    );
    await expect(page.locator(".info .title").first().textContent()).resolves.toContain("Game community API");
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
  }, 60_000);
});
