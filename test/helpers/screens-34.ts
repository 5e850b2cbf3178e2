import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { VIEWPORTS } from './browser.js';
import { ROOT } from './repo.js';

/** Where issue 34's screenshots of the views it changed go (ignored by git), one folder per engineer. */
const SCREENS = join(ROOT, 'test-results', 'screens-34', 'words');

/**
 * The page as it is now, at 1280×800 and at 390×844 (the viewport is put back after), for a person to
 * look at: what a view changed by issue 34 shows on a desktop and on a phone, `focus` scrolled into view.
 */
export async function screens34(page: Page, name: string, focus?: Locator): Promise<void> {
  mkdirSync(SCREENS, { recursive: true });
  const before = page.viewportSize() ?? VIEWPORTS.desktop;
  for (const [label, vp] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(vp);
    // What a person sees on that screen: the viewport, scrolled to the part that changed when one is named.
    await focus?.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENS, `${name}-${label}-${vp.width}x${vp.height}.png`) });
  }
  await page.setViewportSize(before);
}
