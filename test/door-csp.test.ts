import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { desktopPage } from './helpers/browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, ok, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux } from './helpers/sessions.js';

/**
 * Issue 30, row 5: the page keeps its strict CSP (no 'unsafe-inline') and the CSP refuses nothing on
 * any page in real Chromium — the session page's live xterm terminal included, whose DOM renderer
 * writes `<style>` elements and `style` attributes (20 console errors there before).
 */

const DATA_PW = 'project data password';
let dir: string;
let home: string;
let s: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let sessionId: string;
const violations: string[] = [];

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  const env = { ...testEnv(dir), TRELLIS_HOME: home, TRELLIS_DRAIN_MS: '300' };
  s = await startServe(packageCopy(), dir, env);
  sessionId = (await ok(dir, ['session', 'spawn', 'Look at the terminal', '--harness', 'shell'], { env })).trim();
  // The gateway fronts this serve; the project's gate password opens its data and issues, not a shell.
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('admin password 1'), gates: { [encodeProject(dir)]: { password: await hashPassword(DATA_PW) } } }));
  gw = await startTestGateway(home);
  ({ browser, page } = await desktopPage());
  page.on('console', (m) => m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text()) && violations.push(`${page.url()}: ${m.text()}`));
  await page.exposeFunction('reportViolation', (v: string) => violations.push(`${page.url()}: ${v}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { reportViolation: (v: string) => void }).reportViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('no CSP violation on any page', () => {
  it('the CSP has no unsafe-inline', async () => {
    const csp = (await fetch(s.url)).headers.get('content-security-policy') ?? '';
    // 'self', and the hash of the empty text only: an empty <style> applies nothing.
    expect(csp).toMatch(/style-src 'self' 'sha256-47DEQpj8HBSa\+\/TImW\+5JCeuQeRkm5NMpJWZG3hSuFU='(;|$)/);
    expect(csp).not.toMatch(/unsafe-inline/);
  });

  it('board, issues, an issue, a new issue, sessions, inbox, eval: zero violations', async () => {
    const issue = (await ok(dir, ['issue', 'open', 'a thread to look at', '--body', 'with **markdown**'], { env: { TRELLIS_HOME: home } })).trim();
    for (const hash of ['#/board', '#/issues', `#/issues/${issue}`, '#/new-issue', '#/sessions', '#/inbox', '#/eval']) {
      await page.goto(new URL(hash, s.url).href);
      // Rendered: the view's own text is in the page (the boot message replaced).
      await page.waitForFunction(() => (document.querySelector('#main')?.textContent ?? '').trim().length > 0, undefined, { timeout: 15_000 });
    }
    expect(violations).toEqual([]);
  }, 90_000);

  it('the session page with its live terminal, typed into and resized: zero violations, and the terminal is styled', async () => {
    await page.goto(new URL(`#/sessions/${sessionId}`, s.url).href);
    await page.locator('.terminal-frame .xterm-rows').waitFor({ timeout: 15_000 });
    await page.getByTestId('pane-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
    await page.locator('.terminal-frame .xterm').click();
    await page.keyboard.type('printf "\\033[31mred\\033[0m \\033[38;2;10;200;30mtruecolor\\033[0m\\n"\n');
    await page.setViewportSize({ width: 900, height: 700 });
    await expect.poll(() => page.locator('.xterm-rows').textContent(), { timeout: 15_000 }).toMatch(/red truecolor/);
    // xterm's theme reached the page through the CSSOM: the rows have its foreground color, not the default black.
    const color = await page.locator('.xterm-rows').evaluate((e) => getComputedStyle(e).color);
    expect(color).not.toBe('rgb(0, 0, 0)');
    expect(violations).toEqual([]);
  }, 90_000);

  it('the gateway’s host home: zero violations', async () => {
    await page.goto(gw.url);
    await page.waitForFunction(() => (document.querySelector('#main')?.textContent ?? '').trim().length > 0, undefined, { timeout: 15_000 });
    expect(violations).toEqual([]);
  }, 60_000);
});

describe('a project-password login sees what it can do, and no button it would be refused', () => {
  it('sessions: no spawn form; a session: a view-only live terminal, no prompt box, no run/merge/interrupt/review, no close or quarantine (the owner\'s)', async () => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    try {
      const id = encodeProject(dir);
      expect((await p.request.post(new URL('/auth/login', gw.url).href, { data: { password: DATA_PW, project: id } })).status()).toBe(200);
      await p.goto(new URL(`/p/${id}/#/sessions`, gw.url).href);
      await p.getByTestId('shell-needed').waitFor({ timeout: 15_000 });
      expect(await p.getByRole('button', { name: 'Spawn' }).count()).toBe(0);
      await p.goto(new URL(`/p/${id}/#/sessions/${sessionId}`, gw.url).href);
      await p.getByTestId('pane-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      await p.getByText('view only').waitFor();
      // What the login may not use (the route table's rows, from /auth/status) is said, not offered.
      await p.getByText(/this login may not; the admin login may/).waitFor();
      for (const name of ['Merge', 'Run checks', 'Interrupt', 'Resume', 'Request review', 'Close', 'Quarantine', 'Esc', 'Ctrl-C']) expect(await p.getByRole('button', { name, exact: true }).count(), name).toBe(0);
      expect(await p.getByRole('heading', { name: 'Send a prompt' }).count()).toBe(0);
      expect(await p.getByLabel('Read-only').isVisible()).toBe(false);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
