import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { ROOT } from './repo.js';

/** Debian's chromium (`.ci/run` installs it); playwright-core drives it, no browser is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** Where screenshots of each view go (ignored by git). */
export const SHOTS = join(ROOT, 'test-results', 'dashboard');

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const vp = page.viewportSize();
  const path = join(SHOTS, `${name}-${vp?.width}x${vp?.height}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/**
 * Page-level probes for script that must not run: any dialog is recorded (and dismissed), and the page's
 * errors are kept, so a test can assert that nothing an attacker wrote executed.
 */
export function watchPage(page: Page): { dialogs: string[]; errors: string[] } {
  const seen = { dialogs: [] as string[], errors: [] as string[] };
  page.on('dialog', (d) => {
    seen.dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  return seen;
}

/** A fresh Chromium with one desktop-sized page, watched (see watchPage): what each browser test starts from. */
export async function desktopPage(): Promise<{ browser: Browser; page: Page; seen: ReturnType<typeof watchPage> }> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: VIEWPORTS.desktop });
  return { browser, page, seen: watchPage(page) };
}

/**
 * Scrolls `target` into view, resolving it again when a re-render replaced the node between Playwright's
 * finding it and scrolling to it ("Element is not attached to the DOM": the session page re-renders its
 * actions when the session's own event arrives). Any other failure, or one past the deadline, is thrown.
 */
export async function scrollTo(target: Locator, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await target.scrollIntoViewIfNeeded({ timeout: Math.max(1, Math.min(5_000, deadline - Date.now())) });
    } catch (e) {
      if (Date.now() >= deadline || !/not attached/i.test((e as Error).message)) throw e;
    }
  }
}
