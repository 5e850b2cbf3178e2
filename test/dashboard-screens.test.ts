import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { screenshot, VIEWPORTS, desktopPage } from './helpers/browser.js';
import { startTestGateway, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, git, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux } from './helpers/sessions.js';

/**
 * Every view of the dashboard, in the light and the dark theme, at 1280×800 and 390×844, saved under
 * test-results/dashboard/ for a person to look at. Each shot also checks what a look can get wrong
 * without anyone noticing: the page fits the width, and the theme really applied (the dark theme's
 * background is dark, the light one's light).
 */

let dir: string;
let home: string;
let s: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let project: string;
let views: { name: string; url: () => string; ready: string }[];

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  catalogProjects(home, [dir]);
  s = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
  project = new URL(`/p/${encodeProject(dir)}/`, gw.url).href;
  ({ browser, page, seen } = await desktopPage());
  // Something in every view: a waiting session (inbox, sessions, terminal), a reading that failed, an edited issue.
  const session = (await cli('session', 'spawn', 'Restock the oolong shelf', '--harness', 'shell', '--node', 'checkout/payment')).trim();
  await cli('session', 'signal', session, 'turn-end');
  await cli('eval', 'run', '--by', 'ci');
  // The issue through the serve's HTTP (the same verbs as `trellis issue open/reply/edit`): three CLI processes fewer.
  const post = async (path: string, body: object) => {
    const r = await fetch(new URL(path, s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(r.status, path).toBeLessThan(300);
    return (await r.json()) as { id: string };
  };
  const issue = (await post('/api/issues', { concern: 'Oolong shows the wrong steeping time', nodes: ['checkout/payment'], body: 'It says 2 min; the tin says 4.', by: 'ann' })).id;
  await post(`/api/issues/${issue}/reply`, { body: 'Confirmed on the product page.', by: 'bob' });
  await post(`/api/issues/${issue}/edit`, { body: 'It says 2 min; the tin says 4 min at 90 °C.', by: 'ann' });
  const version = git(dir, 'log', '-1', '--format=%H', '--', 'specs/checkout/payment.md').trim();
  views = [
    { name: 'p-inbox', url: () => `${project}#/inbox`, ready: '[data-testid=inbox]' },
    { name: 'p-board', url: () => `${project}#/board`, ready: '.tree .row' },
    { name: 'p-node', url: () => `${project}#/node/checkout/payment`, ready: '[data-testid=node-body]' },
    { name: 'p-node-version', url: () => `${project}#/node/checkout/payment?v=${version}`, ready: '[data-testid=version-text]' },
    { name: 'p-issues', url: () => `${project}#/issues?status=open`, ready: '.issue-list li' },
    { name: 'p-thread', url: () => `${project}#/issues/${issue}`, ready: '[data-testid=edited]' },
    { name: 'p-new-issue', url: () => `${project}#/new-issue`, ready: 'form' },
    { name: 'p-sessions', url: () => `${project}#/sessions`, ready: '.session-list li' },
    { name: 'p-session', url: () => `${project}#/sessions/${session}`, ready: '[data-testid=pane-state]:has-text("live")' },
    { name: 'p-eval', url: () => `${project}#/eval`, ready: '.scoreboard' },
    { name: 'p-scenario', url: () => `${project}#/eval/ops/inventory/back-orders?scope=trunk`, ready: '[data-testid=reading-output]' },
    { name: 'p-missing', url: () => `${project}#/nowhere`, ready: 'main h1' },
    { name: 'h-inbox', url: () => `${gw.url}#/inbox`, ready: '[data-testid=inbox]' },
    { name: 'h-projects', url: () => `${gw.url}#/projects`, ready: '.projects' },
    { name: 'h-project', url: () => `${gw.url}#/projects/${encodeProject(dir)}`, ready: 'main h1' },
    { name: 'h-register', url: () => `${gw.url}#/register?path=${encodeURIComponent(dir)}`, ready: '.folders' },
  ];
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('every view, both themes, both sizes', () => {
  for (const theme of ['light', 'dark'] as const) {
    for (const size of ['desktop', 'phone'] as const) {
      it(`${theme} at ${VIEWPORTS[size].width}×${VIEWPORTS[size].height}`, async () => {
        await page.emulateMedia({ colorScheme: theme });
        await page.setViewportSize(VIEWPORTS[size]);
        for (const v of views) {
          await page.goto(v.url());
          await page.locator(v.ready).first().waitFor({ timeout: 15_000 });
          await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth - innerWidth), { timeout: 15_000 }).toBeLessThanOrEqual(0);
          const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
          const [r, g, b] = bg.match(/\d+/g)!.map(Number);
          const light = 0.299 * r! + 0.587 * g! + 0.114 * b! > 128;
          expect([v.name, light]).toEqual([v.name, theme === 'light']);
          await screenshot(page, `${v.name}-${theme}`);
        }
        expect(seen.errors).toEqual([]);
      });
    }
  }
});
