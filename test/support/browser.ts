import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install -y chromium`, CONTRIBUTING.md "What the tests need"); Playwright's own browser download cannot work on these machines. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where page tests leave their screenshots, for people to look at. */
export const SCREENSHOT_DIR = path.resolve(__dirname, "..", "..", "test-output", "screenshots");

/** `describe`, or a skip that says why when no Chromium is installed; with REQUIRE_BROWSER=1 (CI) a missing one fails. */
export function describeWithBrowser(name: string, fn: () => void): void {
  if (existsSync(CHROMIUM_PATH)) return describe(name, fn);
  if (process.env.REQUIRE_BROWSER === "1")
    throw new Error(`${CHROMIUM_PATH} is missing and REQUIRE_BROWSER=1: apt-get install -y chromium`);
  describe.skip(`${name} — SKIPPED: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`, fn);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Without the background-networking flags Chromium keeps trying Google's hosts, which this closed network refuses.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
