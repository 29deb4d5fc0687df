import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

/**
 * The docs page as a person sees it: Debian's Chromium, headless, driven by
 * playwright-core (no browser download). .ci/run installs Chromium; on a
 * machine without it this file is skipped and says so.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_BROWSER) throw new Error(`No Chromium at ${CHROMIUM}, and REQUIRE_BROWSER is set (as in CI)`);
if (!available) console.warn(`docs-browser: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

const HOST = "api.test";
export const SCREENSHOT = path.resolve("test-output", "docs-page.png");

describe.runIf(available)("the docs page in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        // A name that is not localhost: Chromium treats localhost as secure, other hosts over plain HTTP not.
        `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("when opened from a host other than localhost over plain HTTP, then it shows all twelve operations, loads nothing from outside, and a screenshot is saved", async () => {
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
        "/cosmetic/get-cosmetic", "/cosmetic/update-cosmetic", "/form/create-form", "/freebuild/update-world",
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
