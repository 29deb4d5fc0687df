import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/**
 * Debian's Chromium, headless, driven by playwright-core (no browser
 * download). .ci/run installs it and sets REQUIRE_BROWSER, so that CI fails
 * rather than skips; elsewhere a browser test without it is skipped and says so.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Whether the browser tests can run; `suite` names the test file in the warning. */
export function chromiumAvailable(suite: string): boolean {
  const available = existsSync(CHROMIUM);
  if (!available && process.env.REQUIRE_BROWSER) throw new Error(`No Chromium at ${CHROMIUM}, and REQUIRE_BROWSER is set (as in CI)`);
  if (!available) console.warn(`${suite}: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return available;
}

/** The name the pages are opened at: not localhost, which Chromium treats as secure over plain HTTP, as no real host is. */
export const BROWSER_HOST = "api.test";

/**
 * Chromium as this machine needs it: without background networking (its calls
 * to Google's hosts are refused here), with BROWSER_HOST resolving to 127.0.0.1.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--host-resolver-rules=MAP ${BROWSER_HOST} 127.0.0.1`,
    ],
  });
}
