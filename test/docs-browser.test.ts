import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../src/resources/index.js";
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
    // What the Content-Security-Policy refuses is reported on the console.
    const refused: string[] = [];
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) refused.push(msg.text());
    });
    await page.goto(`${origin}/api/docs`);
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    // An operation opened: its example values, schemas and responses (highlighted code) render too.
    await page.locator(".opblock-summary", { hasText: "/cosmetic/update-cosmetic" }).first().click();
    await page.waitForSelector(".opblock.is-open .highlight-code", { timeout: 10_000 });
    await page.locator('.opblock.is-open button[data-name="model"]').first().click();
    await page.waitForSelector(".opblock.is-open .model-box", { timeout: 10_000 });
    // The highlighted examples are coloured though the policy admits no inline style (set through the DOM).
    expect(await page.locator(".opblock.is-open .highlight-code span[style*='color']").count()).toBeGreaterThan(0);
    const coloured = page.locator(".opblock.is-open .highlight-code span[style*='color']").first();
    expect(await coloured.evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(e).color)).toBe(
      /color: ([^;]+)/.exec((await coloured.getAttribute("style"))!)![1],
    );
    const operations = (await page.locator(".opblock .opblock-summary-path").allTextContents()).map((text) => text.replace(/\u200b/g, "").trim());
    // Every route the service serves, each once (the list is the routes' own: a new one needs no edit here).
    expect(operations.sort()).toEqual([...new Set(apiRoutes.map((r) => r.path))].sort());
    await expect(page.locator(".info .title").first().textContent()).resolves.toContain("Game community API");
    await page.locator(".btn.authorize").first().click();
    await page.waitForSelector(".modal-ux .auth-container", { timeout: 10_000 });
    await page.locator(".modal-ux .close-modal").first().click();
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(refused).toEqual([]);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
  }, 60_000);
});
